// @ts-check
// Parts of a page drawn only once they are on screen or soon will be (issue 32: the episode
// board holds no more elements than it shows). A part is a box (a panel) and the latest draw
// asked of it: while the box is out of reach the draw waits (a newer one replaces it); once an
// IntersectionObserver finds the box within REACH of the viewport, the waiting draw runs and
// every later one runs at once. A drawn part stays drawn.
//
// Stable data attribute (CSS and tests rely on it): [data-drawn="0"|"1"] on each box.

/** How far outside the viewport a box counts as in reach (half a screen above and below). */
export const REACH = "50% 0px";

/** @type {WeakMap<Element, {drawn: boolean, pending: (() => void) | null}>} */
const parts = new WeakMap();
/** @type {IntersectionObserver | null} */
let observer = null;

// The observer may report a box in reach on a layout of a moment (before the parts above it
// were drawn); it reports again when that changes, so its word is checked against the layout now.
function seen(/** @type {IntersectionObserverEntry[]} */ records) {
  for (const record of records) {
    if (record.isIntersecting && inReachNow(record.target)) drawNow(record.target);
  }
}

function inReachNow(/** @type {Element} */ box) {
  const rect = box.getBoundingClientRect();
  const margin = window.innerHeight / 2; // REACH
  return rect.bottom >= -margin && rect.top <= window.innerHeight + margin;
}

function drawNow(/** @type {Element} */ box) {
  const part = parts.get(box);
  if (!part || part.drawn) return;
  part.drawn = true;
  if (box instanceof HTMLElement) box.dataset.drawn = "1";
  if (observer) observer.unobserve(box);
  const draw = part.pending;
  part.pending = null;
  if (draw) draw();
}

/**
 * Whether `box` is on screen now (its layout is read: call it once, not per step). The viewport
 * alone, not REACH: what is drawn above it may still grow (the first step is drawn before the
 * step strip and the curve), so a box in reach now may be far from it once they are in.
 */
function onScreenNow(/** @type {Element} */ box) {
  const rect = box.getBoundingClientRect();
  return rect.bottom > 0 && rect.top < window.innerHeight;
}

/**
 * Ask for `draw` to run for the box `box`: at once when the box was drawn already, else when it
 * comes within reach (the latest draw asked wins). `checkNow` true also reads its place now and
 * draws at once when it is on screen (the first step: what is on screen is there when the step
 * is marked drawn, not a frame later). Without IntersectionObserver every draw runs.
 * @param {Element} box
 * @param {() => void} draw
 * @param {boolean} [checkNow]
 */
export function drawInReach(box, draw, checkNow = false) {
  let part = parts.get(box);
  if (typeof IntersectionObserver !== "function" || (part && part.drawn)) {
    draw();
    return;
  }
  if (!part) {
    part = { drawn: false, pending: null };
    parts.set(box, part);
    if (box instanceof HTMLElement) box.dataset.drawn = "0";
    if (!observer) observer = new IntersectionObserver(seen, { rootMargin: REACH });
    observer.observe(box);
  }
  part.pending = draw;
  if (checkNow && onScreenNow(box)) drawNow(box);
}

/** Draw every waiting part of `boxes` now (before printing: the printed page shows them all). */
export function drawAll(/** @type {Iterable<Element>} */ boxes) {
  for (const box of boxes) drawNow(box);
}
