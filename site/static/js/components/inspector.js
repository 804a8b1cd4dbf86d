// The check inspector: the selected check's note, state at the step shown, its scenario plot
// (alert checks) and the reproduce panel with a copy button.
//
// Stable ids: #check-inspector (hidden when no check is selected), #inspector-check-id,
// #inspector-state[data-state], #inspector-plot-box (hidden without a plot), #scenario-plot,
// #reproduce-kind, #reproduce-text, #reproduce-copy, #reproduce-copied.

import { byId, fill, el } from "../lib/dom.js";
import { failureAt, stateAt } from "../lib/data.js";
import { renderScenarioPlot } from "./scenario.js";
import { reproduceText } from "./reproduce.js";

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

/**
 * Wire the inspector; returns update(run, n, checkId): show checkId's inspector at step n
 * (rebuilding plot and reproduce text only when the check changes), or hide it for null.
 */
export function createInspector(task, onClose) {
  const box = byId("check-inspector");
  const checks = new Map(task.checks.map((check, index) => [check.id, { check, index }]));
  let shown = null;
  let plotUpdate = null;
  byId("inspector-close").addEventListener("click", onClose);
  byId("reproduce-copy").addEventListener("click", async () => {
    const ok = await copyText(byId("reproduce-text").textContent);
    fill(byId("reproduce-copied"), ok ? "Copied." : "Select the text and copy it by hand.");
  });

  function build(check) {
    fill(byId("inspector-check-id"), check.id);
    fill(byId("inspector-label"), check.label || "");
    fill(byId("inspector-note"), check.note || "");
    plotUpdate = renderScenarioPlot(byId("scenario-plot"), check, task);
    byId("inspector-plot-box").hidden = plotUpdate === null;
    if (plotUpdate) {
      const plot = task.scenario_plots[check.plot.plot];
      fill(byId("inspector-scenario"), plot.scenario);
      fill(byId("inspector-scenario-title"), `${plot.title} \u00b7 service ${plot.service}`);
    }
    const reproduce = reproduceText(check, task);
    fill(byId("reproduce-kind"), reproduce.kind);
    fill(byId("reproduce-text"), reproduce.text);
    fill(byId("reproduce-copied"), "");
  }

  return function update(run, n, checkId) {
    const entry = checkId ? checks.get(checkId) : null;
    box.hidden = !entry;
    if (!entry) {
      shown = null;
      return;
    }
    if (shown !== checkId) {
      shown = checkId;
      build(entry.check);
    }
    fill(byId("reproduce-tools"), toolsLine(run.tools, run.catalog_version));
    const step = run.steps[n];
    const state = stateAt(step, entry.index);
    const target = byId("inspector-state");
    target.dataset.state = STATE_NAMES[state];
    const detail = state === "0" ? failureAt(run, n, checkId) : "";
    fill(target, el("strong", null, `At step ${n} this check ${STATE_WORDS[state]}.`), detail ? el("span", { class: "check-detail" }, ` ${detail}`) : null);
    if (plotUpdate) plotUpdate(step);
  };
}
