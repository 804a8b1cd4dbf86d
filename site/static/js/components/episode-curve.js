// The reward curve of an episode run (#episode-curve, site/templates/_episode_curve.html): the
// sum of the step rewards, not clamped, so penalties show below 0 and overshoot above 1, beside
// ARIA's running total, which is clamped to [0, 1] after every step (tasks/base.py:319-320); the
// two clamp bounds are drawn, penalised steps and failed actions marked, the final score ticked.
//
// Stable ids: #episode-curve-svg, path.curve-sum, path.curve-total, line.clamp-line[data-bound],
// circle.point[data-step][data-mark="penalty"|"failed"|""], #episode-curve-marker[data-step].

import { byId, clear, svg } from "../lib/dom.js";
import { formatReward } from "../lib/format.js";
import { list } from "../lib/episode-data.js";

const WIDTH = 1000;
const HEIGHT = 190;
const PAD = { left: 44, right: 96, top: 12, bottom: 26 };

/** The unclamped running sum of the step rewards, per step (step 0: 0). */
export function rewardSums(steps) {
  let sum = 0;
  return steps.map((step, n) => {
    if (n > 0 && !(step.env && step.env.error)) sum += typeof step.reward === "number" ? step.reward : 0;
    return Math.round(sum * 1e6) / 1e6;
  });
}

/** "penalty" when the step's reward holds a penalty component, "failed" for a failed action. */
export function stepMark(step) {
  const env = step.env || {};
  if (env.error) return "failed";
  return list(env.components).some((c) => typeof c.amount === "number" && c.amount < 0) ? "penalty" : "";
}

function scale(steps, sums, score) {
  const values = [...sums, ...steps.map((s) => s.total), typeof score === "number" ? score : 0];
  const low = Math.min(0, ...values);
  const high = Math.max(1, ...values);
  const last = Math.max(1, steps.length - 1);
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  return {
    last, plotHeight,
    x: (n) => PAD.left + (n / last) * plotWidth,
    y: (value) => PAD.top + (1 - (value - low) / (high - low)) * plotHeight,
  };
}

function stepPath(values, { x, y }) {
  let path = `M ${x(0)} ${y(values[0])}`;
  for (let n = 1; n < values.length; n += 1) path += ` H ${x(n)} V ${y(values[n])}`;
  return path;
}

function drawBounds(root, { x, y, last }) {
  for (const bound of [0, 1]) {
    root.append(
      svg("line", { class: "clamp-line", dataset: { bound: String(bound) }, x1: x(0), x2: x(last), y1: y(bound), y2: y(bound) }),
      svg("text", { class: "axis-label", x: PAD.left - 6, y: y(bound) + 4, "text-anchor": "end" }, bound.toFixed(1)),
    );
  }
  root.append(svg("text", { class: "axis-label clamp-label", x: x(last) + 4, y: y(1) - 4 }, "clamp"));
}

/**
 * Draw the episode curve into #episode-curve; a click on a point calls onSelect(n).
 * Returns update(n), which moves the current-step marker.
 */
export function renderEpisodeCurve(run, onSelect) {
  const container = byId("episode-curve-body");
  clear(container);
  const steps = run.steps;
  const sums = rewardSums(steps);
  const final = run.final || {};
  const score = typeof final.reward === "number" ? final.reward : null;
  const s = scale(steps, sums, score);
  const root = svg("svg", {
    id: "episode-curve-svg", viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: "img",
    "aria-label": `Sum of step rewards from 0 to ${formatReward(sums.at(-1))} (not clamped) and the running total clamped to [0, 1], ending at ${formatReward(steps.at(-1).total)}${score === null ? "" : `; final score ${formatReward(score)}`}`,
  });
  drawBounds(root, s);
  root.append(
    svg("path", { class: "curve-sum", d: stepPath(sums, s), fill: "none" }),
    svg("path", { class: "curve-total", d: stepPath(steps.map((step) => step.total), s), fill: "none" }),
  );
  steps.forEach((step, n) => {
    if (n === 0) return;
    const mark = stepMark(step);
    const point = svg("circle", { class: ["point", mark ? `point-${mark}` : null], dataset: { step: String(n), mark }, cx: s.x(n), cy: s.y(sums[n]), r: mark ? 5 : 3.5 });
    point.addEventListener("click", () => onSelect(n));
    root.append(point);
  });
  // a point's tooltip (its <title>) is made when the pointer first comes over it, not with the curve
  root.addEventListener("pointerover", (event) => {
    const point = event.target;
    if (!(point instanceof SVGCircleElement) || !point.classList.contains("point") || point.firstChild) return;
    const n = Number(point.dataset.step);
    const mark = point.dataset.mark;
    point.append(svg("title", null, `Step ${n}: reward ${formatReward(steps[n].reward)}, sum ${formatReward(sums[n])}, running total ${formatReward(steps[n].total)}${mark === "failed" ? " (failed action)" : mark === "penalty" ? " (penalised)" : ""}`));
  });
  if (score !== null) {
    root.append(
      svg("line", { class: "score-tick", x1: s.x(s.last), x2: s.x(s.last) + 14, y1: s.y(score), y2: s.y(score) }),
      svg("text", { class: "axis-label", x: s.x(s.last) + 16, y: s.y(score) + 4 }, `score ${score.toFixed(3)}`),
    );
  }
  const marker = svg("circle", { id: "episode-curve-marker", class: "marker", r: 6 });
  const cursor = svg("line", { class: "cursor", y1: PAD.top, y2: PAD.top + s.plotHeight });
  root.append(cursor, marker);
  container.append(root);
  return function update(n) {
    cursor.setAttribute("x1", s.x(n));
    cursor.setAttribute("x2", s.x(n));
    marker.setAttribute("cx", s.x(n));
    marker.setAttribute("cy", s.y(steps[n].total));
    marker.dataset.step = String(n);
  };
}
