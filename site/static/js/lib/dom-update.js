// @ts-check
// Updating nodes a view keeps between steps in place: write only what differs from what is
// there, and rebuild a node's children only when what they are drawn from changed. A step
// switch then costs the browser style and layout of what changed, not of the whole view.
//
// Every string still goes in as text (textContent, attributes), never as HTML.

const drawnFrom = new WeakMap();

/**
 * Refill `node` by calling build() only when `key` (a string naming everything the children
 * are drawn from, e.g. a JSON text of the inputs) differs from the key of its last refill.
 * Returns true when it called build().
 */
export function refillOnChange(node, key, build) {
  if (drawnFrom.get(node) === key) return false;
  drawnFrom.set(node, key);
  build();
  return true;
}

/** Set node's text to `text` (a string) unless it is that already. */
export function setText(node, text) {
  if (node.textContent !== text) node.textContent = text;
}

/** Set attribute `name` to the string `value`, or remove it when value is null; only if it differs. */
export function setAttr(node, name, value) {
  if (value === null || value === undefined) {
    if (node.hasAttribute(name)) node.removeAttribute(name);
  } else if (node.getAttribute(name) !== value) {
    node.setAttribute(name, value);
  }
}

/** Set node.hidden to `hidden` unless it is that already; returns !hidden (shown). */
export function setHidden(node, hidden) {
  if (node.hidden !== hidden) node.hidden = hidden;
  return !hidden;
}

/** Lines per block of a long text (setLines): about what a text block's box shows at once. */
export const LINES_PER_CHUNK = 24;

/** `text` cut after every LINES_PER_CHUNK-th line break (the pieces joined are `text`). */
function chunksOf(/** @type {string} */ text) {
  const chunks = [];
  let start = 0;
  let lines = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) {
    if (++lines < LINES_PER_CHUNK) continue;
    chunks.push(text.slice(start, at + 1));
    start = at + 1;
    lines = 0;
  }
  if (start < text.length || chunks.length === 0) chunks.push(text.slice(start));
  return chunks;
}

/**
 * Set the text of `block` (a <pre>) to `text`, held in span.text-chunk blocks of LINES_PER_CHUNK
 * lines (app.css: content-visibility auto, so the lines scrolled out of the box are not laid
 * out): only the blocks whose text differs are written, so a step switch that changes a few
 * lines of a long output lays out those. The block's textContent is `text`.
 * @param {HTMLElement} block
 * @param {string} text
 */
export function setLines(block, text) {
  const chunks = chunksOf(text);
  if (block.childNodes.length !== block.children.length) block.replaceChildren(); // text put there otherwise
  const spans = block.children;
  for (let index = 0; index < chunks.length; index += 1) {
    const span = spans[index];
    if (span) setText(span, chunks[index]);
    else {
      const fresh = document.createElement("span");
      fresh.className = "text-chunk";
      fresh.textContent = chunks[index];
      block.append(fresh);
    }
  }
  while (spans.length > chunks.length) spans[spans.length - 1].remove();
}
