// The cumulative reward curve: inline SVG built with createElementNS, current step marked.

import { svg, clear } from "../lib/dom.js";
import { formatDelta, formatReward, rewardTrend } from "../lib/format.js";

const WIDTH = 1000;
const HEIGHT = 170;
const PAD = { left: 44, right: 14, top: 12, bottom: 26 };

function curveScale(steps) {
  const totals = steps.map((step) => step.total);
  const low = Math.min(0, ...totals);
  const high = Math.max(1, ...totals);
  const last = Math.max(1, steps.length - 1);
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const x = (n) => PAD.left + (n / last) * plotWidth;
  const y = (value) => PAD.top + (1 - (value - low) / (high - low)) * plotHeight;
  return { totals, low, high, last, plotWidth, plotHeight, x, y };
}

function drawAxes(root, steps, { low, high, y }) {
  for (const value of [low, (low + high) / 2, high]) {
    root.append(
      svg("line", { class: "grid", x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value) }),
      svg("text", { class: "axis-label", x: PAD.left - 6, y: y(value) + 4, "text-anchor": "end" }, value.toFixed(1)),
    );
  }
  root.append(
    svg("text", { class: "axis-label", x: PAD.left, y: HEIGHT - 6, "text-anchor": "start" }, "step 0"),
    svg("text", { class: "axis-label", x: WIDTH - PAD.right, y: HEIGHT - 6, "text-anchor": "end" }, `step ${steps.length - 1}`),
  );
}

function drawLine(root, steps, { totals, x, y }) {
  let path = `M ${x(0)} ${y(totals[0])}`;
  for (let n = 1; n < steps.length; n += 1) path += ` H ${x(n)} V ${y(totals[n])}`;
  root.append(svg("path", { class: "curve-line", d: path, fill: "none" }));
  steps.forEach((step, n) => {
    if (step.graded) {
      root.append(svg("circle", { class: `point trend-${rewardTrend(step)}`, cx: x(n), cy: y(step.total), r: 3.5 }));
    }
  });
}

// One hit area for every step (a rect per step costs thousands of nodes on long runs): the
// pointer's x picks the step, a single column rect shows which.
function drawHitArea(root, steps, { last, plotWidth, plotHeight, x }, onSelect) {
  const columnWidth = plotWidth / last;
  const column = svg("rect", { class: "hover-column", y: PAD.top, width: columnWidth, height: plotHeight, visibility: "hidden" });
  const hitTitle = svg("title", null, "Click to open a step");
  const hit = svg(
    "rect",
    { class: "hit", id: "curve-hit", x: PAD.left - columnWidth / 2, y: PAD.top, width: plotWidth + columnWidth, height: plotHeight },
    hitTitle,
  );
  const stepAt = (event) => {
    const matrix = root.getScreenCTM();
    if (!matrix) return 0;
    const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
    return Math.max(0, Math.min(steps.length - 1, Math.round(((point.x - PAD.left) / plotWidth) * last)));
  };
  let hovered = null;
  hit.addEventListener("mousemove", (event) => {
    const n = stepAt(event);
    if (n === hovered) return;
    hovered = n;
    const step = steps[n];
    hitTitle.textContent = `Step ${n}: ${formatReward(step.total)}${step.graded ? ` (${formatDelta(step.reward)})` : ""}`;
    column.setAttribute("x", Math.max(PAD.left - columnWidth / 2, x(n) - columnWidth / 2));
    column.setAttribute("visibility", "visible");
  });
  hit.addEventListener("mouseleave", () => {
    hovered = null;
    column.setAttribute("visibility", "hidden");
  });
  hit.addEventListener("click", (event) => onSelect(stepAt(event)));
  root.append(column, hit);
}

/**
 * Draw steps' totals into container as a step chart; clicking a step column calls onSelect(n).
 * Returns update(n), which moves the current-step marker.
 */
export function renderCurve(container, steps, onSelect) {
  clear(container);
  const scale = curveScale(steps);
  const { totals, plotHeight, x, y } = scale;
  const root = svg("svg", {
    id: "reward-curve-svg",
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-label": `Cumulative reward over ${steps.length} steps, from ${formatReward(totals[0])} to ${formatReward(totals.at(-1))}`,
  });
  drawAxes(root, steps, scale);
  drawLine(root, steps, scale);
  drawHitArea(root, steps, scale, onSelect);

  const cursor = svg("line", { class: "cursor", y1: PAD.top, y2: PAD.top + plotHeight });
  const marker = svg("circle", { id: "curve-marker", class: "marker", r: 6 });
  root.append(cursor, marker);
  container.append(root);

  return function update(current) {
    const cx = x(current);
    cursor.setAttribute("x1", cx);
    cursor.setAttribute("x2", cx);
    marker.setAttribute("cx", cx);
    marker.setAttribute("cy", y(totals[current]));
    marker.dataset.step = String(current);
  };
}
