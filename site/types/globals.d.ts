// What the viewer's modules keep on window (for the type check only: tsc -p site).
interface Window {
  /** Requests for run files started before the page's bundle (static/prefetch-run.js, lib/data.js). */
  __prefetched?: Record<string, Promise<FetchResult>>;
}

/** A fetch's outcome as lib/data.js request() gives it (static/prefetch-run.js starts the same). */
type FetchResult = { status?: number; ok?: boolean; json?: () => Promise<unknown>; fetchError?: string };
