// @ts-check
// Parts of a page drawn only once they are on screen or soon will be (issue 32: the episode
// board holds no more elements than it shows). A part is a box (a panel) and the latest draw
// asked of it: while the box is out of reach the draw waits (a newer one replaces it); once an
// IntersectionObserver finds the box within REACH of the viewport, its body is put in place from
// its <template class="panel-body"> children, the waiting draw runs and
// every later one runs at once. A drawn part stays drawn. Folds (a <details> below) are the same
// for what is out of sight until opened.
//
// Stable data attribute (CSS and tests rely on it): [data-drawn="0"|"1"] on each box and fold.

/** How far outside the viewport a box counts as in reach (a quarter of a screen above and below). */
export const REACH = "25% 0px";

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
  const margin = window.innerHeight / 4; // REACH
  return rect.bottom >= -margin && rect.top <= window.innerHeight + margin;
}

/** Put the box's body in place from its <template class="panel-body"> children (a box out of reach holds its heading alone). */
function unpack(/** @type {Element} */ box) {
  for (const body of box.querySelectorAll(":scope > template.panel-body")) {
    body.replaceWith(document.importNode(/** @type {HTMLTemplateElement} */ (body).content, true));
  }
}

function drawNow(/** @type {Element} */ box) {
  const part = parts.get(box);
  if (!part || part.drawn) return;
  part.drawn = true;
  unpack(box);
  if (box instanceof HTMLElement) box.dataset.drawn = "1";
  if (observer) observer.unobserve(box);
  const draw = part.pending;
  part.pending = null;
  if (draw) draw();
}

function observe(/** @type {Element} */ box) {
  if (!observer) observer = new IntersectionObserver(seen, { rootMargin: REACH });
  observer.observe(box);
}

/** @type {Set<Element> | null} */
let held = null;

/**
 * Watch no box for coming in reach until releaseReach(): the page draws a first view whose
 * layout still grows above the boxes (the run view's first step comes before its step strip and
 * curve), and a box in reach then is far from it once they are in. checkNow still draws a box
 * that is on screen.
 */
export function holdReach() {
  if (!held) held = new Set();
}

/** Watch the boxes asked for since holdReach() (the layout above them is whole). */
export function releaseReach() {
  const boxes = held;
  held = null;
  for (const box of boxes || []) if (!parts.get(box)?.drawn) observe(box);
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
    if (!part) unpack(box);
    draw();
    return;
  }
  if (!part) {
    part = { drawn: false, pending: null };
    parts.set(box, part);
    if (box instanceof HTMLElement) box.dataset.drawn = "0";
    if (held) held.add(box);
    else observe(box);
  }
  part.pending = draw;
  if (checkNow && onScreenNow(box)) drawNow(box);
}

/** Draw every waiting part of `boxes` now (before printing: the printed page shows them all). */
export function drawAll(/** @type {Iterable<Element>} */ boxes) {
  for (const box of boxes) drawNow(box);
}

// -- folds ---------------------------------------------------------------------------------------
// A <details> whose body is built when it is first opened (by the reader, by openFold, or for
// printing): a closed fold holds its summary alone. [data-drawn="0"|"1"] on each fold.

/** @type {WeakMap<HTMLDetailsElement, () => void>} */
const folds = new WeakMap();

function drawFold(/** @type {HTMLDetailsElement} */ fold) {
  const draw = folds.get(fold);
  folds.delete(fold);
  fold.dataset.drawn = "1";
  if (draw) draw();
}

/**
 * Ask for `draw` to build the body of `fold`: at once when the fold is open or was drawn already,
 * else when it is opened (the latest draw asked wins).
 * @param {HTMLDetailsElement} fold
 * @param {() => void} draw
 */
export function drawWhenOpen(fold, draw) {
  if (fold.open || fold.dataset.drawn === "1") {
    fold.dataset.drawn = "1";
    draw();
    return;
  }
  if (fold.dataset.drawn !== "0") {
    fold.dataset.drawn = "0";
    fold.addEventListener("toggle", () => { if (fold.open && folds.has(fold)) drawFold(fold); });
  }
  folds.set(fold, draw);
}

/** Open `fold` (or close it, `open` false), its body drawn first when it waits. */
export function openFold(/** @type {HTMLDetailsElement} */ fold, open = true) {
  if (open && folds.has(fold)) drawFold(fold);
  if (fold.open !== open) fold.open = open;
}

/** @type {WeakSet<HTMLDetailsElement>} */
const printed = new WeakSet();

/** Print `fold` open (its body drawn); a fold the reader had closed closes again after printing. */
export function unfoldForPrint(/** @type {HTMLDetailsElement} */ fold) {
  if (printed.has(fold)) return;
  printed.add(fold);
  let wasOpen = fold.open;
  window.addEventListener("beforeprint", () => {
    wasOpen = fold.open;
    openFold(fold);
  });
  window.addEventListener("afterprint", () => openFold(fold, wasOpen));
}
