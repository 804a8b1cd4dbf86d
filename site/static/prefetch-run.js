// Run view, inlined first thing in the head of run.html and of each run's own page
// (runs/<id>.html; exporter/render.py inline_script; the page's CSP allows it by its hash): start
// fetching the run's small head file (data/run-heads/<id>.json) so its download overlaps the
// bundle's; lib/data.js takes the response from window.__prefetched when it loads the same path.
// The head holds all the first step needs; pages/run.js fetches the task file and the whole run
// file once that step is drawn. On a run's own page the element names the run (data-run), the
// path to the site's top (data-root) and the step its HTML shows (data-step): there the fetch
// starts after the frame that shows that step, and an address asking for another step marks
// the page (html.prerender-stale: run.css hides the step shown until the run view draws the one
// asked for) and starts it at once.
(function prefetchRun() {
  const script = document.currentScript;
  const page = script ? script.dataset : {};
  const asked = new URLSearchParams(location.search);
  const runId = page.run || asked.get("run");
  const root = page.root || "";
  if (page.step !== undefined) {
    const step = Math.max(Number.parseInt(asked.get("step") || "0", 10) || 0, 0);
    if (String(step) !== page.step) document.documentElement.classList.add("prerender-stale");
  }
  if (!runId || typeof fetch !== "function") return;
  const started = Object.create(null);
  window.__prefetched = started;
  const id = encodeURIComponent(runId);

  // the shape of data.js request(): {status, ok, json()} or {fetchError}
  function get(url) {
    started[url] = fetch(root + url).then(
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
  const begin = () => get(`data/run-heads/${id}.json`).then((answer) => answer.ok && answer.json()).then((head) => {
    if (!head || head.kind !== "episode") return;
    import(`./${root}static/bundles/run.episode.js`).catch(() => {});
    const styles = document.body && document.body.dataset.episodeStyles;
    if (styles && !document.getElementById("episode-styles")) {
      const link = Object.assign(document.createElement("link"), { id: "episode-styles", rel: "stylesheet", href: styles });
      const done = () => { link.dataset.state = "done"; };
      link.addEventListener("load", done, { once: true });
      link.addEventListener("error", done, { once: true });
      document.head.append(link);
    }
  }, () => {});
  // a page whose HTML shows the step asked for paints it first: the head is asked for after
  // that frame, with the bundle (static/run-page-start.js)
  if (page.step !== undefined && !document.documentElement.classList.contains("prerender-stale")) {
    requestAnimationFrame(() => setTimeout(begin, 0));
  } else {
    begin();
  }
})();
