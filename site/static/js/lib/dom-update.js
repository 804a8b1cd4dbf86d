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
