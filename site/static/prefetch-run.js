// Run view, before its modules load: start fetching and parsing data/runs/<id>.json at once, so the
// download overlaps the module downloads. static/js/data.js loadRun() takes the result when the id
// matches. A classic script (no module), loaded first thing from the page's head.
(function prefetchRun() {
  const runId = new URLSearchParams(location.search).get("run");
  if (!runId || typeof fetch !== "function") return;
  const url = `data/runs/${encodeURIComponent(runId)}.json`;
  const result = fetch(url, { cache: "no-store" }).then(
    async (response) => {
      if (!response.ok) return { url, status: response.status };
      try {
        return { url, status: response.status, value: await response.json() };
      } catch (error) {
        return { url, status: response.status, parseError: error.message };
      }
    },
    (error) => ({ url, fetchError: error.message }),
  );
  window.__runPrefetch = { runId, result };
})();
