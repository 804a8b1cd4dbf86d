// The single exported file's entry: picks the view from ?page= (none: home, run, compare), puts
// that view's markup from its <template> into <main>, keeps links inside this one file, then
// starts the view's module. Bundled with the modules of static/js/ (module ids by path: pages/run.js) by exporter/single_file.py.

const VIEWS = {
  index: { module: "pages/home.js", bodyClass: "page-home", title: "Runs \u00b7 3amBench Replay" },
  run: { module: "pages/run.js", bodyClass: "page-run", title: "Run \u00b7 3amBench Replay" },
  compare: { module: "pages/compare.js", bodyClass: "page-compare", title: "Compare runs \u00b7 3amBench Replay" },
};
// index.html, run.html?..., compare.html?... and a run's own page, runs/<id>.html?...
const PAGE_LINK = /^(?:(index|run|compare)\.html|runs\/([^/?#]+)\.html)(?:\?(.*))?$/;

function keepInFile(anchor) {
  const match = PAGE_LINK.exec(anchor.getAttribute("href") || "");
  if (!match) return;
  const query = new URLSearchParams();
  const page = match[1] || "run";
  if (page !== "index") query.set("page", page);
  if (match[2]) {
    try {
      query.set("run", decodeURIComponent(match[2]));
    } catch {
      return; // not a name this site writes
    }
  }
  for (const [name, value] of new URLSearchParams(match[3] || "")) query.set(name, value);
  anchor.setAttribute("href", `?${query.toString()}`);
}

function keepLinksInFile(root) {
  root.querySelectorAll("a[href]").forEach(keepInFile);
  new MutationObserver((records) => {
    for (const record of records) {
      if (record.type === "attributes") {
        if (record.target.tagName === "A") keepInFile(record.target);
        continue;
      }
      for (const node of record.addedNodes) {
        if (node.nodeType !== Node.ELEMENT_NODE) continue;
        if (node.tagName === "A") keepInFile(node);
        node.querySelectorAll("a[href]").forEach(keepInFile);
      }
    }
  }).observe(root, { subtree: true, childList: true, attributes: true, attributeFilter: ["href"] });
}

const wanted = new URLSearchParams(location.search).get("page") || "index";
const name = Object.hasOwn(VIEWS, wanted) ? wanted : "index";
const view = VIEWS[name];
document.body.classList.add(view.bodyClass);
document.title = view.title;
document.getElementById("main").replaceChildren(document.getElementById(`page-${name}`).content.cloneNode(true));
const crumbs = document.getElementById(`crumbs-${name}`);
if (crumbs) document.querySelector("nav.crumbs").append(crumbs.content.cloneNode(true));
keepLinksInFile(document.body);
__require(view.module);
