// A run's own page (runs/<id>.html, exporter/run_page.py), inlined right after its first step
// (allowed by its hash). The step is in the HTML: set the mark pages/run.js sets once it has drawn
// a step (bench/viewer.py), and ask for the run view's bundle (data-bundle) only after the frame
// that shows the step, so the first paint waits for the stylesheet alone (static/prefetch-run.js
// starts the head's download then too). A page asked for another step (html.prerender-stale,
// set by the prefetch script) asks for the bundle at once and leaves the mark to the view.
// Until the bundle is in (a frame or so; for good on file://, where the page says to serve the
// site), Enter in the run search must not submit its form and reload the page (pages/run.js
// does the same once it runs; the form is above this script).
(function startRunPage() {
  const form = document.getElementById("run-search-form");
  if (form) form.addEventListener("submit", (event) => event.preventDefault());
  const script = document.currentScript;
  const bundle = script && script.dataset.bundle;
  if (!bundle) return;
  const load = () => {
    const module = Object.assign(document.createElement("script"), { type: "module", src: bundle });
    document.head.append(module);
  };
  if (document.documentElement.classList.contains("prerender-stale")) {
    load();
    return;
  }
  performance.mark("first-step-rendered");
  requestAnimationFrame(() => setTimeout(load, 0));
})();
