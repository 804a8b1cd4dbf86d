// The check x step matrix: one row per catalog check, one column per step, drawn on a canvas.
//
// Stable ids and data attributes (tests rely on them):
//   #matrix-canvas     canvas[data-steps][data-checks][data-cell-width][data-cell-height]; cell (n, i) is
//                      the rectangle at x = n * cellWidth, y = i * cellHeight (catalog order)
//   #matrix-labels     one li[data-check-id] per row drawn, check ids as text: only the rows in the
//                      matrix's scrolling box and LABEL_MARGIN rows either side are drawn (a long
//                      catalog's labels would be most of the page's elements; the canvas is one)
//   #matrix-cursor     the current step's column; #matrix-row the selected check's row
//   #matrix-readout    what the pointer is over ("Step 4 · A1-fire-1: fails")
// Clicking a cell calls onSelect(n, checkId): that step, with that check selected.

import { el, clear, fill } from "../lib/dom.js";
import { blameAt } from "../lib/data.js";

const ROW_HEIGHT = 14;
const LABEL_MARGIN = 15;
const MIN_CELL = 3;
const MAX_CELL = 16;
const STATE_WORDS = { 1: "passes", 0: "fails", "-": "not applicable", "": "not graded yet" };

function themeColors() {
  const style = getComputedStyle(document.documentElement);
  const read = (name, fallback) => style.getPropertyValue(name).trim() || fallback;
  return {
    1: read("--pass", "#1f7a3f"),
    0: read("--fail", "#b42318"),
    "-": read("--na-cell", "#d0d4db"),
    "": read("--surface-2", "#f0f2f5"),
    grid: read("--surface", "#ffffff"),
  };
}

/** The state character of check `index` at `step` ("1", "0", "-", or "" when not graded yet). */
export function cellState(step, index) {
  return step.checks ? step.checks[index] || "" : "";
}

function draw(canvas, steps, checkCount, cellWidth) {
  const colors = themeColors();
  const context = canvas.getContext("2d", { alpha: false });
  context.fillStyle = colors[""];
  context.fillRect(0, 0, canvas.width, canvas.height);
  for (let index = 0; index < checkCount; index += 1) {
    const y = index * ROW_HEIGHT;
    let start = 0;
    let current = cellState(steps[0], index);
    for (let n = 1; n <= steps.length; n += 1) {
      const next = n < steps.length ? cellState(steps[n], index) : null;
      if (next === current) continue;
      context.fillStyle = colors[current];
      context.fillRect(start * cellWidth, y + 1, (n - start) * cellWidth, ROW_HEIGHT - 2);
      start = n;
      current = next;
    }
  }
  if (cellWidth >= 6) {
    context.fillStyle = colors.grid;
    for (let n = 1; n < steps.length; n += 1) context.fillRect(n * cellWidth, 0, 1, canvas.height);
  }
}

/**
 * Draw in `labels` the labels of the rows in view in `scroll` (the matrix's box) and LABEL_MARGIN
 * rows either side, again as it scrolls; the list keeps the height of every row. Returns
 * draw(), which draws them again (the selected one, `selected()`, marked).
 */
function windowedLabels(scroll, labels, checks, selected) {
  const longest = checks.reduce((most, check) => Math.max(most, check.id.length), 1);
  labels.style.width = `calc(${Math.min(longest, 43)}ch + 0.7rem)`;
  labels.style.height = `${checks.length * ROW_HEIGHT}px`;
  let shown = "";
  const draw = () => {
    const first = Math.max(0, Math.floor(scroll.scrollTop / ROW_HEIGHT) - LABEL_MARGIN);
    const rows = Math.ceil((scroll.clientHeight || 416) / ROW_HEIGHT) + 2 * LABEL_MARGIN;
    const last = Math.min(checks.length, first + rows);
    const key = `${first}:${last}:${selected()}`;
    if (key === shown) return;
    shown = key;
    labels.style.paddingTop = `${first * ROW_HEIGHT}px`;
    labels.replaceChildren(...checks.slice(first, last).map((check) => el("li", {
      title: check.label || check.id, class: check.id === selected() ? "selected" : null, dataset: { checkId: check.id } }, check.id)));
  };
  let pending = false;
  scroll.addEventListener("scroll", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      draw();
    });
  }, { passive: true });
  draw();
  return draw;
}

/**
 * Build the matrix for run.steps x task.checks inside container. Returns update(n, checkId),
 * which moves the step cursor and the selected-row band (no redraw).
 */
export function renderMatrix(container, steps, task, onSelect) {
  clear(container);
  const checks = task.checks;
  if (checks.length === 0) {
    container.append(el("p", { class: "empty", id: "matrix-empty" }, "No check catalog: this run has no check \u00d7 step matrix."));
    return () => {};
  }
  const available = Math.max(300, (container.clientWidth || 900) - 180);
  const cellWidth = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(available / steps.length)));
  const canvas = el("canvas", {
    id: "matrix-canvas",
    width: String(steps.length * cellWidth),
    height: String(checks.length * ROW_HEIGHT),
    role: "img",
    "aria-label": `Check by step matrix: ${checks.length} checks over ${steps.length} steps. Use the checks panel for the same states as text.`,
    dataset: { steps: String(steps.length), checks: String(checks.length), cellWidth: String(cellWidth), cellHeight: String(ROW_HEIGHT) },
  });
  const labels = el("ol", { class: "matrix-labels", id: "matrix-labels", "aria-hidden": "true" });
  const cursor = el("div", { class: "matrix-cursor", id: "matrix-cursor" });
  const row = el("div", { class: "matrix-row", id: "matrix-row", hidden: true });
  const plot = el("div", { class: "matrix-plot" }, canvas, cursor, row);
  const readout = el("p", { class: "matrix-readout muted", id: "matrix-readout" }, "Point at a cell to read it; click to open that step with that check selected.");
  const scroll = el("div", { class: "matrix-scroll", tabindex: "0", "aria-label": "Check by step matrix (scrolls)" }, labels, plot);
  container.append(scroll, readout);
  let selectedId = null;
  const drawLabels = windowedLabels(scroll, labels, checks, () => selectedId);
  cursor.style.width = `${cellWidth}px`;
  cursor.style.height = `${checks.length * ROW_HEIGHT}px`;
  row.style.height = `${ROW_HEIGHT}px`;
  row.style.width = `${steps.length * cellWidth}px`;

  draw(canvas, steps, checks.length, cellWidth);
  const scheme = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  if (scheme && scheme.addEventListener) scheme.addEventListener("change", () => draw(canvas, steps, checks.length, cellWidth));

  function cellAt(event) {
    const box = canvas.getBoundingClientRect();
    const n = Math.floor(((event.clientX - box.left) * (canvas.width / box.width)) / cellWidth);
    const index = Math.floor(((event.clientY - box.top) * (canvas.height / box.height)) / ROW_HEIGHT);
    if (n < 0 || n >= steps.length || index < 0 || index >= checks.length) return null;
    return { n, index };
  }
  let hovered = "";
  canvas.addEventListener("mousemove", (event) => {
    const cell = cellAt(event);
    const key = cell ? `${cell.n}:${cell.index}` : "";
    if (key === hovered) return;
    hovered = key;
    if (!cell) return;
    const check = checks[cell.index];
    const blame = blameAt({ steps }, cell.n, cell.index, check.id);
    const broken = blame && blame.step > 0 ? ` (broken at step ${blame.step}${blame.hunk === null ? "" : `, hunk ${blame.hunk + 1}`}; its check list entry links there)` : "";
    const text = `Step ${cell.n} \u00b7 ${check.id}: ${STATE_WORDS[cellState(steps[cell.n], cell.index)]}${broken}`;
    canvas.title = text;
    fill(readout, text);
  });
  canvas.addEventListener("click", (event) => {
    const cell = cellAt(event);
    if (cell) onSelect(cell.n, checks[cell.index].id);
  });

  const rowOf = new Map(checks.map((check, index) => [check.id, index]));
  let shownRow = null;
  return function update(n, checkId) {
    cursor.style.transform = `translateX(${n * cellWidth}px)`;
    cursor.dataset.step = String(n);
    const index = rowOf.has(checkId) ? rowOf.get(checkId) : null;
    if (index === shownRow) return;
    shownRow = index;
    row.hidden = index === null;
    if (index !== null) {
      row.style.transform = `translateY(${index * ROW_HEIGHT}px)`;
      row.dataset.checkId = checkId;
    }
    selectedId = checkId;
    drawLabels();
  };
}
