// Run view: steps through one run, chosen by the URL (?run=ID&step=N&check=ID).
//
// Stable ids and data attributes (tests and deep links rely on them):
//   #run-error         shown (role=alert) with a message when the run or its task cannot be loaded
//   #run-view          the whole view, hidden until the data is loaded
//   #run-title, #run-meta, #instruction (task instruction as plain text)
//   #btn-first #btn-prev #btn-next #btn-last   move between steps (also Home/ArrowLeft/ArrowRight/End)
//   #step-index        the current step number n (0 = initial state); #step-count the last n
//   #step-reward       cumulative reward after the current step, 4 decimals ("0.2400")
//   #step-delta        the current step's own reward change ("+0.2400", "−0.0420", "±0.0000"; empty if not graded)
//   #timeline          one button.step-dot[data-step=n][data-trend=up|down|flat|none] per step; aria-current="step" on the current one
//   #reward-curve-svg  the SVG curve; #curve-marker[data-step=n] marks the current step
//   #step-detail       the step: #step-heading, #step-tool (tool name), #step-message,
//                      #step-arguments (JSON.stringify(arguments, null, 2)), #step-output (tool output text),
//                      #step-diff-box / #step-diff-path / #step-diff (table.diff-table, tr.diff-line[data-op=" "|"+"|"-"])
//   #episode-*         action episodes only: services, dependency map, alerts, logs, score (see episode.js)
//   #check-inspector   the selected check: state, scenario plot, reproduce panel (see inspector.js)
//   #matrix-panel      the check x step matrix (see matrix.js); a click opens that step with that check selected
//   #checks-panel      li.check[data-check-id][data-index][data-state="pass|fail|na"][data-changed="1"|"0"],
//                      failing checks show their detail in .check-detail; #checks-summary "p/a pass"
//
// Every string from a run is inserted with textContent / text nodes (see dom.js), never as HTML.

import { byId, fill, el } from "./dom.js";
import { loadRun, loadTask } from "./data.js";
import { formatDelta, formatReward } from "./format.js";
import { renderTimeline } from "./timeline.js";
import { renderCurve } from "./curve.js";
import { renderChecks } from "./checks.js";
import { renderStepDetail } from "./detail.js";
import { renderMatrix } from "./matrix.js";
import { mountEpisodeView } from "./episode.js";
import { readParams, writeParams } from "./params.js";
import { createInspector } from "./inspector.js";
import { installNavigation } from "./nav.js";
import { failureAt } from "./runmodel.js";
import { installRunSearch } from "./runsearch.js";

const state = { run: null, task: null, step: 0, check: null, views: null };

function showError(message) {
  byId("run-loading").hidden = true;
  byId("run-view").hidden = true;
  const box = byId("run-error");
  fill(box, el("strong", null, "Cannot show this run. "), message, " ", el("a", { href: "index.html" }, "Back to all runs"));
  box.hidden = false;
}

function clampStep(value) {
  const last = state.run.steps.length - 1;
  const n = Number.parseInt(value, 10);
  if (!Number.isFinite(n) || n < 0) return 0;
  return Math.min(n, last);
}

function writeUrl() {
  writeParams({ run: state.run.run_id, step: state.step, check: state.check });
}

function show(n) {
  state.step = clampStep(n);
  const step = state.run.steps[state.step];
  const last = state.run.steps.length - 1;
  fill(byId("step-index"), String(state.step));
  fill(byId("step-reward"), formatReward(step.total));
  const delta = byId("step-delta");
  fill(delta, step.graded ? formatDelta(step.reward) : "not graded");
  delta.dataset.trend = step.graded ? (step.reward > 0 ? "up" : step.reward < 0 ? "down" : "flat") : "none";
  byId("btn-first").disabled = state.step === 0;
  byId("btn-prev").disabled = state.step === 0;
  byId("btn-next").disabled = state.step === last;
  byId("btn-last").disabled = state.step === last;
  state.views.timeline(state.step);
  state.views.curve(state.step);
  state.views.checks(step, state.check, (checkId) => failureAt(state.run, state.step, checkId));
  state.views.matrix(state.step, state.check);
  state.views.inspector(state.run, state.step, state.check);
  renderStepDetail(step, state.run.kind);
  if (state.views.episode) state.views.episode(state.step);
  writeUrl();
}

function selectCheck(checkId) {
  state.check = state.check === checkId ? null : checkId;
  show(state.step);
}

function selectCell(n, checkId) {
  state.check = checkId;
  show(n);
  const item = document.querySelector(`li.check[data-check-id="${CSS.escape(checkId)}"]`);
  if (item) item.scrollIntoView({ block: "nearest" });
}

function renderHeader(run, task) {
  document.title = `${task.title} \u00b7 ${run.run_id} \u00b7 3amBench Replay`;
  fill(byId("crumb-run"), run.run_id);
  fill(byId("run-title"), task.title);
  const meta = byId("run-meta");
  const final = run.final || {};
  const items = [
    ["Run", run.run_id],
    ["Task", run.task_id],
    ["Kind", run.kind],
    ["Policy", run.policy ?? "\u2014"],
    ["Model", run.model ?? "\u2014"],
    ["Seed", run.seed ?? "\u2014"],
    ["Final reward", formatReward(typeof final.reward === "number" ? final.reward : run.steps.at(-1).total)],
  ];
  fill(meta, items.map(([name, value]) => el("div", null, el("dt", null, name), el("dd", null, String(value)))));
  meta.append(el("div", null, el("dt", null, "Solved"), el("dd", null, el("span", { class: ["badge", final.solved === true ? "badge-pass" : "badge-muted"] }, final.solved === true ? "solved" : "no"))));
  fill(byId("instruction"), task.instruction);
  byId("compare-link").setAttribute("href", `compare.html?${new URLSearchParams({ a: run.run_id }).toString()}`);
}

async function main() {
  const params = readParams();
  const runId = params.get("run");
  if (!runId) {
    showError("No run chosen: the address needs ?run=<run id>.");
    return;
  }
  try {
    state.run = await loadRun(runId);
    performance.mark("run-loaded");
    if (!state.run || !Array.isArray(state.run.steps) || state.run.steps.length === 0) {
      throw new Error(`Run file for \u201c${runId}\u201d has no steps.`);
    }
    state.task = await loadTask(state.run.task_id);
    performance.mark("task-loaded");
  } catch (error) {
    showError(error.message);
    return;
  }
  const { run, task } = state;
  state.check = params.get("check");
  renderHeader(run, task);
  fill(byId("step-count"), String(run.steps.length - 1));
  byId("run-loading").hidden = true;
  byId("run-view").hidden = false;
  const timed = (name, build) => {
    const value = build();
    performance.mark(`built-${name}`);
    return value;
  };
  state.views = {
    timeline: timed("timeline", () => renderTimeline(byId("timeline"), run.steps, show)),
    curve: timed("curve", () => renderCurve(byId("reward-curve"), run.steps, show)),
    checks: timed("checks", () => renderChecks(byId("checks-groups"), byId("checks-summary"), task, selectCheck)),
    matrix: () => {},
    inspector: timed("inspector", () => createInspector(task, () => selectCheck(state.check))),
    episode: timed("episode", () => mountEpisodeView(run)),
  };
  byId("btn-first").addEventListener("click", () => show(0));
  byId("btn-prev").addEventListener("click", () => show(state.step - 1));
  byId("btn-next").addEventListener("click", () => show(state.step + 1));
  byId("btn-last").addEventListener("click", () => show(run.steps.length - 1));
  const focusSearch = installRunSearch(run, () => state.step, show);
  installNavigation({ step: () => state.step, last: () => run.steps.length - 1, show }, focusSearch);
  show(params.get("step") ?? 0);
  performance.mark("first-step-rendered");
  // The matrix (a canvas of every check at every step) comes after the first step is painted.
  await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  state.views.matrix = timed("matrix", () => renderMatrix(byId("matrix"), run.steps, task, selectCell));
  state.views.matrix(state.step, state.check);
  if (state.check) {
    const item = document.querySelector(`li.check[data-check-id="${CSS.escape(state.check)}"]`);
    if (item) item.scrollIntoView({ block: "center" });
  }
  document.body.dataset.ready = "1";
}

main().catch((error) => showError(`Unexpected error: ${error.message}`));
