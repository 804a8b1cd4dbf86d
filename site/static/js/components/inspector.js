// The check inspector: the selected check's note, state at the step shown, why it fails (its
// cause with the grader's facts, and the change that broke it: cause-facts.js), its scenario plot
// (alert checks) and the reproduce panel with a copy button.
//
// Stable ids: #check-inspector (hidden when no check is selected; data-inputs="none" when the
// check needs no scenario data, "loading" while the task's data/task-inputs file is on its way,
// "loaded", "error"), #inspector-check-id, #inspector-state[data-state], #inspector-inputs-status
// (role=status: loading, or why the scenario data could not be loaded), #inspector-plot-box
// (hidden without a plot), #scenario-plot, #reproduce-kind, #reproduce-text, #reproduce-copy,
// #reproduce-copied.

import { byId, clear, fill, el } from "../lib/dom.js";
import { failureAt, stateAt } from "../lib/data.js";
import { clip } from "../lib/format.js";
import { causeBox } from "./cause-facts.js";
import { renderScenarioPlot } from "./scenario.js";
import { needsInputSeries, reproduceText } from "./reproduce.js";

const STATE_WORDS = { 1: "passes", 0: "fails", "-": "is not applicable", "": "is not graded yet" };
const STATE_NAMES = { 1: "pass", 0: "fail", "-": "na", "": "none" };

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const range = document.createRange();
    range.selectNodeContents(byId("reproduce-text"));
    const selection = getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    return document.execCommand && document.execCommand("copy");
  }
}

/** The tool versions a run was graded with, as one sentence (run.tools may be null). */
export function toolsLine(tools, catalogVersion) {
  const catalog = catalogVersion ? ` Checks from catalog ${catalogVersion}.` : " This run does not name its check catalog's release.";
  if (!tools) return `This run does not record which promtool and amtool graded it.${catalog}`;
  return `Graded with promtool ${tools.promtool} and amtool ${tools.amtool}; inhibit checks follow ${tools.inhibition} semantics.${catalog}`;
}

function inputsStatus(state, text) {
  const status = byId("inspector-inputs-status");
  byId("check-inspector").dataset.inputs = state;
  status.dataset.state = state;
  status.hidden = text === "";
  fill(status, text);
}

function showReproduce(kind, text, ready = true) {
  fill(byId("reproduce-kind"), kind);
  fill(byId("reproduce-text"), text);
  byId("reproduce-copy").disabled = !ready;
}

const NO_INPUTS = { evaluation_interval: null, input_series: {}, scenario_plots: {} };

/** Draw check's plot and reproduce text from the inputs file `data`; returns the plot's update(step) or null. */
function drawInputs(check, task, data, step) {
  const plotUpdate = check.plot ? renderScenarioPlot(byId("scenario-plot"), check, task, data) : null;
  byId("inspector-plot-box").hidden = plotUpdate === null;
  if (plotUpdate) {
    const plot = data.scenario_plots[check.plot.plot];
    fill(byId("inspector-scenario"), plot.scenario);
    fill(byId("inspector-scenario-title"), `${plot.title} \u00b7 service ${plot.service}`);
    if (step) plotUpdate(step);
  }
  const reproduce = reproduceText(check, data);
  showReproduce(reproduce.kind, reproduce.text);
  return plotUpdate;
}

/** The plot box and reproduce text of check while the inputs file is on its way. */
function drawWaiting(check) {
  clear(byId("scenario-plot"));
  fill(byId("inspector-scenario"), "");
  fill(byId("inspector-scenario-title"), check.plot ? "Loading the scenario\u2026" : "");
  byId("inspector-plot-box").hidden = !check.plot;
  const reproduce = needsInputSeries(check) ? null : reproduceText(check, NO_INPUTS);
  if (reproduce) showReproduce(reproduce.kind, reproduce.text);
  else showReproduce("promtool", "# Loading the scenario's input series\u2026\n", false);
}

/**
 * Wire the inspector for the task file `task`; returns update(run, n, checkId): show checkId's
 * inspector at step n (rebuilding plot and reproduce text only when the check changes), or hide
 * it for null. loadInputs() gives a promise of the task's data/task-inputs file (data.js
 * loadTaskInputs, fetched once a page): it is called when the first check whose plot or reproduce
 * text needs it is opened; until it is in, both say they are loading, and a failed load is said
 * in the inspector (#inspector-inputs-status), not as a page error. whyOf(checkId, index) gives
 * a failing check's {cause, blame, href} (run.js, as for the checks panel); onBlame(n, hunk,
 * checkId) opens the step that broke it (the blame link's click).
 */
export function createInspector(task, onClose, loadInputs, whyOf = null, onBlame = null) {
  const box = byId("check-inspector");
  const checks = new Map(task.checks.map((check, index) => [check.id, { check, index }]));
  let shown = null;
  let plotUpdate = null;
  let step = null;
  let inputs = null;
  let builds = 0;
  byId("inspector-close").addEventListener("click", onClose);
  const showWhy = causeBox(byId("inspector-cause"), (blame) => onBlame && onBlame(blame.step, blame.hunk ?? null, shown));
  byId("reproduce-copy").addEventListener("click", async () => {
    const ok = await copyText(byId("reproduce-text").textContent);
    fill(byId("reproduce-copied"), ok ? "Copied." : "Select the text and copy it by hand.");
  });

  function build(check) {
    const ticket = ++builds;
    fill(byId("inspector-check-id"), check.id);
    fill(byId("inspector-label"), check.label || "");
    fill(byId("inspector-note"), check.note || "");
    fill(byId("reproduce-copied"), "");
    if (!check.plot && !needsInputSeries(check)) {
      inputsStatus("none", "");
      plotUpdate = drawInputs(check, task, NO_INPUTS, step);
      return;
    }
    if (inputs) {
      inputsStatus("loaded", "");
      plotUpdate = drawInputs(check, task, inputs, step);
      return;
    }
    inputsStatus("loading", "Loading the task's scenario data (input series and plots)\u2026");
    plotUpdate = null;
    drawWaiting(check);
    loadInputs().then((data) => {
      inputs = data;
      if (ticket !== builds) return;
      inputsStatus("loaded", "");
      plotUpdate = drawInputs(check, task, data, step);
    }, (error) => {
      if (ticket !== builds) return;
      inputsStatus("error", `The scenario plot and the promtool test need the task's scenario data, which could not be loaded: ${error.message}`);
      byId("inspector-plot-box").hidden = true;
      if (needsInputSeries(check)) showReproduce("promtool", "", false);
    });
  }

  return function update(run, n, checkId) {
    const entry = checkId ? checks.get(checkId) : null;
    box.hidden = !entry;
    if (!entry) {
      shown = null;
      showWhy(null);
      return;
    }
    step = run.steps[n];
    if (shown !== checkId) {
      shown = checkId;
      build(entry.check);
    }
    fill(byId("reproduce-tools"), toolsLine(run.tools, run.catalog_version));
    const state = stateAt(step, entry.index);
    const target = byId("inspector-state");
    target.dataset.state = STATE_NAMES[state];
    const detail = state === "0" ? failureAt(run, n, checkId) : "";
    fill(target, el("strong", null, `At step ${n} this check ${STATE_WORDS[state]}.`), detail ? el("span", { class: "check-detail" }, ` ${clip(detail, 4000)}`) : null);
    showWhy(state === "0" && whyOf ? whyOf(checkId, entry.index) : null);
    if (plotUpdate) plotUpdate(step);
  };
}
