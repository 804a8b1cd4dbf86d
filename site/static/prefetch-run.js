// Run view, before its modules load: start fetching the run's small head file
// (data/run-heads/<id>.json) and then its task file, so the downloads overlap the module downloads;
// both are parsed as they arrive, while the page waits for its modules. static/js/lib/data.js takes a
// response from window.__prefetched when it loads the same path. The whole run file is not started
// here: its download (megabytes for a long run) would compete with the modules; pages/run.js starts
// it once they are in.
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

  get(`data/run-heads/${id}.json`).then(async (result) => {
    if (!result.ok) return;
    try {
      const head = await result.json();
      if (head && typeof head.task_id === "string") get(`data/tasks/${encodeURIComponent(head.task_id)}.json`);
    } catch {
      // data.js reports a broken head file when it reads it
    }
  });
})();
