// The scenario plot of an alert check: the service's error ratio over the scenario, the threshold,
// the outage window, and the evaluation times of the requirement's checks in that scenario.
//
// Stable ids and data attributes (tests rely on them):
//   #scenario-svg            the plot; path.series-line[data-series=ratio|w<minutes>]
//   line#threshold-line      [data-threshold]
//   rect.phase[data-service][data-start][data-end][data-own="1"|"0"] outage windows
//   g.eval-mark[data-check-id][data-min][data-state=pass|fail|na|none][data-selected="1"|"0"]

import { svg, el, clear } from "../lib/dom.js";
import { stateAt } from "../lib/data.js";

const WIDTH = 640;
const HEIGHT = 240;
const PAD = { left: 52, right: 16, top: 14, bottom: 30 };
const STATES = { 1: "pass", 0: "fail", "-": "na", "": "none" };

function seriesName(key, windows, quantity) {
  if (key === "up") return "fraction of targets up";
  if (key === "ratio") return `${quantity} per interval`;
  const minutes = Number(key.slice(1));
  const named = Object.entries(windows).find(([, value]) => value === minutes);
  const label = minutes % 60 === 0 ? `${minutes / 60}h` : `${minutes}m`;
  return `${label} window${named ? ` (${named[0]})` : ""}`;
}

function plotScale(plot, ref) {
  const keys = Object.keys(plot.series);
  const length = Math.max(...keys.map((key) => plot.series[key].length));
  const horizon = Math.max(1, plot.horizon_min || length - 1);
  const values = keys.flatMap((key) => plot.series[key]).filter((v) => typeof v === "number");
  const high = Math.max(ref.threshold || 0, ...values, 1e-9) * 1.12;
  const x = (minute) => PAD.left + (minute / horizon) * (WIDTH - PAD.left - PAD.right);
  const y = (value) => PAD.top + (1 - value / high) * (HEIGHT - PAD.top - PAD.bottom);
  return { keys, horizon, high, x, y };
}

function drawPhases(root, plot, quantity, { horizon, x }) {
  for (const [service, phases] of Object.entries(plot.phases || {})) {
    for (const phase of phases) {
      const own = service === plot.service;
      root.append(
        svg(
          "rect",
          {
            class: ["phase", own ? "phase-own" : "phase-other"],
            x: x(phase.start),
            y: PAD.top,
            width: Math.max(1, x(Math.min(phase.end, horizon)) - x(phase.start)),
            height: HEIGHT - PAD.top - PAD.bottom,
            dataset: { service, start: String(phase.start), end: String(phase.end), own: own ? "1" : "0" },
          },
          svg("title", null, phase.outage
            ? `${service}: targets ${phase.outage} from ${phase.start}m to ${phase.end}m`
            : `${service}: ${quantity} ${phase.error_ratio} at ${phase.traffic}\u00d7 traffic from ${phase.start}m to ${phase.end}m`),
        ),
      );
    }
  }
}

function drawAxes(root, { horizon, high, x, y }) {
  for (const value of [0, high / 2, high]) {
    root.append(
      svg("line", { class: "grid", x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value) }),
      svg("text", { class: "axis-label", x: PAD.left - 6, y: y(value) + 4, "text-anchor": "end" }, value.toPrecision(2)),
    );
  }
  for (let minute = 0; minute <= horizon; minute += horizon > 120 ? 30 : 15) {
    root.append(svg("text", { class: "axis-label", x: x(minute), y: HEIGHT - 10, "text-anchor": "middle" }, `${minute}m`));
  }
}

function drawSeries(root, plot, ref, quantity, { keys, horizon, x, y }) {
  for (const key of keys) {
    let path = "";
    plot.series[key].forEach((value, minute) => {
      if (typeof value !== "number" || minute > horizon) return;
      path += `${path === "" || plot.series[key][minute - 1] === null ? "M" : "L"} ${x(minute).toFixed(1)} ${y(value).toFixed(1)} `;
    });
    root.append(svg("path", { class: ["series-line", `series-${key === "ratio" || key === "up" ? "ratio" : "window"}`], d: path.trim(), fill: "none", dataset: { series: key } }, svg("title", null, seriesName(key, ref.windows || {}, quantity))));
  }
  if (typeof ref.threshold === "number") {
    root.append(
      svg("line", { id: "threshold-line", class: "threshold-line", x1: PAD.left, x2: WIDTH - PAD.right, y1: y(ref.threshold), y2: y(ref.threshold), dataset: { threshold: String(ref.threshold) } }),
      svg("text", { class: "threshold-label", x: WIDTH - PAD.right - 4, y: y(ref.threshold) - 5, "text-anchor": "end" }, `threshold ${ref.threshold}`),
    );
  }
}

/** The evaluation marks of the requirement's checks in this scenario: [{group, title, other, index}]. */
function drawEvaluationMarks(root, check, task, { x }) {
  const marks = [];
  task.checks.forEach((other, index) => {
    if (!other.plot || other.plot.plot !== check.plot.plot || other.req !== check.req) return;
    const selected = other.id === check.id;
    const title = svg("title");
    const dot = svg("circle", { cx: x(other.plot.eval_min), cy: HEIGHT - PAD.bottom, r: selected ? 6.5 : 4.5 });
    const group = svg(
      "g",
      { class: ["eval-mark", selected ? "selected" : null], dataset: { checkId: other.id, min: String(other.plot.eval_min), selected: selected ? "1" : "0" } },
      svg("line", { x1: x(other.plot.eval_min), x2: x(other.plot.eval_min), y1: PAD.top, y2: HEIGHT - PAD.bottom }),
      dot,
      title,
    );
    marks.push({ group, title, other, index });
    root.append(group);
  });
  return marks;
}

function plotLegend(plot, keys, quantity) {
  return el(
    "p",
    { class: "legend muted scenario-legend" },
    el("span", { class: "line-key key-ratio", "aria-hidden": "true" }), keys.includes("up") ? " targets up " : ` ${quantity} per interval `,
    el("span", { class: "line-key key-window", "aria-hidden": "true" }), " windowed ratio ",
    el("span", { class: "line-key key-threshold", "aria-hidden": "true" }), " threshold ",
    el("span", { class: "swatch swatch-phase", "aria-hidden": "true" }), ` ${plot.service} outage window; marks: this requirement's evaluation times in this scenario (pass / fail at the step shown; the large one is this check).`,
  );
}

/**
 * Draw the plot for `check` (which has check.plot) into container: the plot from `inputs` (the
 * task's data/task-inputs file), the evaluation marks of the task file's checks. Returns
 * update(step), which colours the marks by the checks' states at that step; null when there is
 * no plot.
 */
export function renderScenarioPlot(container, check, task, inputs) {
  clear(container);
  const ref = check.plot;
  const plot = ref ? (inputs.scenario_plots || {})[ref.plot] : null;
  if (!plot) return null;
  const quantity = plot.quantity || "error ratio";
  const scale = plotScale(plot, ref);
  const root = svg("svg", {
    id: "scenario-svg",
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-label": `Scenario ${plot.scenario}: ${plot.title}. ${quantity[0].toUpperCase()}${quantity.slice(1)} of ${plot.service} over ${scale.horizon} minutes${ref.threshold !== null ? `, threshold ${ref.threshold}` : ""}; this check evaluates at ${ref.eval_min}m.`,
  });
  drawPhases(root, plot, quantity, scale);
  drawAxes(root, scale);
  drawSeries(root, plot, ref, quantity, scale);
  const marks = drawEvaluationMarks(root, check, task, scale);
  container.append(root, plotLegend(plot, scale.keys, quantity));

  return function update(step) {
    for (const mark of marks) {
      const state = STATES[stateAt(step, mark.index)];
      mark.group.dataset.state = state;
      mark.title.textContent = `${mark.other.id} at ${mark.other.plot.eval_min}m: ${state}`;
    }
  };
}
