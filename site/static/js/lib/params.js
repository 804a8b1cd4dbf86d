// @ts-check
// The page's state lives in its address: read and write query parameters in one place.

/** The page's parameters (URLSearchParams) from location.search. */
export function readParams() {
  return new URLSearchParams(location.search);
}

// In a single exported file every view is one page, chosen by ?page=run|compare (none: home);
// the writes below keep it.
const PAGE = new URLSearchParams(location.search).get("page");

/** A query string for `params` (URLSearchParams or object) that keeps this page's ?page=. */
export function pageQuery(params) {
  const query = new URLSearchParams();
  if (PAGE) query.set("page", PAGE);
  for (const [name, value] of new URLSearchParams(params)) query.set(name, value);
  return query.toString();
}

let pending = null;
let lastWrite = 0;

/**
 * Replace the address's query with `params` (an object of name -> value; null/"" values dropped).
 * Writes at most every 80 ms (Chromium throttles history.replaceState); the last call always lands.
 */
export function writeParams(params) {
  const query = new URLSearchParams();
  if (PAGE) query.set("page", PAGE);
  for (const [name, value] of Object.entries(params)) {
    if (value !== null && value !== undefined && value !== "") query.set(name, String(value));
  }
  const text = query.toString();
  const url = text ? `${location.pathname}?${text}` : location.pathname;
  const now = performance.now();
  if (pending) clearTimeout(pending);
  if (now - lastWrite > 80) {
    lastWrite = now;
    pending = null;
    history.replaceState(null, "", url);
    return;
  }
  pending = setTimeout(() => {
    pending = null;
    lastWrite = performance.now();
    history.replaceState(null, "", url);
  }, 80);
}
