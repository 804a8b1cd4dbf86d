// @ts-check
// DOM building without HTML parsing: every string from a run becomes a text node.
// Never use innerHTML/outerHTML/insertAdjacentHTML with run data; build nodes here instead.

const SVG_NS = "http://www.w3.org/2000/svg";

function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function setAttributes(node, attrs) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (/^on/i.test(name)) throw new Error(`refusing event-handler attribute ${name}`);
    if (name === "class") node.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  return node;
}

/** An HTML element: el("li", {class: "x", dataset: {checkId: id}}, "text", childNode). */
export function el(tag, attrs, ...children) {
  return append(setAttributes(document.createElement(tag), attrs), children);
}

/** An SVG element (createElementNS); children as for el(). */
export function svg(tag, attrs, ...children) {
  return append(setAttributes(document.createElementNS(SVG_NS, tag), attrs), children);
}

/** Remove every child of node. */
export function clear(node) {
  node.replaceChildren();
  return node;
}

/** Replace node's children with the given ones (text or nodes). */
export function fill(node, ...children) {
  clear(node);
  return append(node, children);
}

/**
 * The path from this page to the site's top ("" for a page there, "../" for one a folder down:
 * runs/<id>.html, the gallery's pages), from #file-notice's data-root (base.html); "" in the
 * single exported file. Data files and links to the top's pages are made with it.
 * @returns {string}
 */
export function siteRoot() {
  const notice = document.getElementById("file-notice");
  return notice && notice.dataset.root ? notice.dataset.root : "";
}

/**
 * A run's own page from the site's top: runs/<id>.html (exporter/run_page.py), its first step
 * written in the HTML.
 * @param {string} runId
 * @returns {string}
 */
export function runPagePath(runId) {
  return `runs/${encodeURIComponent(runId)}.html`;
}

export function byId(id) {
  const node = document.getElementById(id);
  if (!node) throw new Error(`page is missing #${id}`);
  return node;
}

/**
 * The element #`id`, or null while the page does not hold it. A block only some runs or steps
 * have waits in a <template id="`id`-template"> where it goes (a page holds no hidden block it
 * never shows): with `wanted` true, the first call puts it in place, and the page keeps it.
 * @param {string} id
 * @param {boolean} [wanted]
 * @returns {HTMLElement | null}
 */
export function blockFor(id, wanted = false) {
  const node = document.getElementById(id);
  if (node || !wanted) return node;
  const template = document.getElementById(`${id}-template`);
  if (!(template instanceof HTMLTemplateElement)) return null;
  template.replaceWith(document.importNode(template.content, true));
  return document.getElementById(id);
}

/**
 * A page's load failure: hides `${prefix}-loading` and `${prefix}-view`, fills `${prefix}-error`
 * (role=alert in the page) with `headline`, `message` and a link back to all runs, and shows it.
 */
export function showPageError(prefix, headline, message) {
  byId(`${prefix}-loading`).hidden = true;
  byId(`${prefix}-view`).hidden = true;
  const box = byId(`${prefix}-error`);
  fill(box, el("strong", null, `${headline} `), message, " ", el("a", { href: `${siteRoot()}index.html` }, "Back to all runs"));
  box.hidden = false;
}
