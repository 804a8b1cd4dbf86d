// Run view, inlined first thing in run.html's head (exporter/render.py inline_script; the page's
// CSP allows it by its hash): start fetching the run's small head file (data/run-heads/<id>.json)
// so its download overlaps the bundle's; lib/data.js takes the response from window.__prefetched
// when it loads the same path. The head holds all the first step needs; pages/run.js fetches the
// task file and the whole run file once that step is drawn.
(function prefetchRun() {
  const runId = new URLSearchParams(location.search).get("run");
  if (!runId || typeof fetch !== "function") return;
  const started = Object.create(null);
  window.__prefetched = started;
  const id = encodeURIComponent(runId);

  // the shape of data.js request(): {status, ok, json()} or {fetchError}
  function get(url) {
    started[url] = fetch(url).then(
      (response) => {
        const parsed = response.ok ? response.json() : null;
        if (parsed) parsed.catch(() => {});
        return { status: response.status, ok: response.ok, json: () => parsed || response.json() };
      },
      (error) => ({ fetchError: error.message }),
    );
    return started[url];
  }

  // an episode's first step is its board, whose modules are a chunk of their own
  // (exporter/bundle.py PAGE_CHUNKS) and whose rules a stylesheet of their own
  // (exporter/stylesheets.py): both downloads start as soon as the head says "episode"
  // (pages/run.js episodeStyles takes the link added here)
  get(`data/run-heads/${id}.json`).then((answer) => answer.ok && answer.json()).then((head) => {
    if (!head || head.kind !== "episode") return;
    import("./static/bundles/run.episode.js").catch(() => {});
    const styles = document.body && document.body.dataset.episodeStyles;
    if (styles && !document.getElementById("episode-styles")) {
      const link = Object.assign(document.createElement("link"), { id: "episode-styles", rel: "stylesheet", href: styles });
      const done = () => { link.dataset.state = "done"; };
      link.addEventListener("load", done, { once: true });
      link.addEventListener("error", done, { once: true });
      document.head.append(link);
    }
  }, () => {});
})();
