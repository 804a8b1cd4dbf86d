// Run view, before its modules load: start fetching the run's small head file
// (data/run-heads/<id>.json), so its download overlaps the module downloads; it is parsed as it
// arrives, while the page waits for its modules. static/js/lib/data.js takes a response from
// window.__prefetched when it loads the same path. Nothing else is started here: the head holds
// all the first step needs, and pages/run.js fetches the task file and the whole run file once
// that step is drawn (their downloads would compete with the head and the modules).
// A classic script (no module), loaded first thing from the page's head.
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

  get(`data/run-heads/${id}.json`);
})();
