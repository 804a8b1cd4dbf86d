// An embedded ATIF subagent trajectory (v1.7 subagent_trajectories) in a modal dialog: its
// steps with message, tool calls, outputs and media; a nested subagent opens in its place.
//
// Stable ids: #subagent-dialog, #subagent-heading, #subagent-steps, #subagent-close,
// #subagent-back (to the subagent that spawned this one).

import { blockFor, byId, clear, el, fill } from "../lib/dom.js";
import { renderMediaParts } from "./media-parts.js";

let trail = [];

function find(run, id) {
  return (run.subagents || []).find((sub) => sub.trajectory_id === id) || null;
}

/** Buttons opening each subagent of `ids` (the step that spawned them links here). */
export function subagentButtons(run, ids) {
  return ids.map((id) => el("button", { type: "button", class: "button subagent-open", dataset: { trajectoryId: id } },
    find(run, id) ? `Open subagent ${id}` : `Subagent ${id} (not in this file)`));
}

/** Wire the subagent buttons inside `container` to open their subagent. */
export function wireSubagentButtons(run, container) {
  for (const button of container.querySelectorAll("button.subagent-open")) {
    button.addEventListener("click", () => openSubagent(run, button.dataset.trajectoryId));
  }
}

function renderStep(run, step) {
  const item = el("li", { class: ["subagent-step", step.copied ? "copied" : null], dataset: { source: step.source } },
    el("p", { class: "subagent-step-head" }, el("strong", null, `Step ${step.step_id}`), ` ${step.source}`,
      step.copied ? el("span", { class: "badge copied-badge" }, "copied context") : null),
    step.message ? el("p", { class: "step-message" }, step.message) : null,
    (step.tools || []).map((tool) => el("div", { class: "block" }, el("h4", null, tool.name),
      el("pre", { class: "text-block", tabindex: "0" }, JSON.stringify(tool.arguments, null, 2)))),
    (step.outputs || []).map((output) => el("pre", { class: "text-block output", tabindex: "0" }, output)),
    renderMediaParts(step.media),
    step.subagents ? subagentButtons(run, step.subagents) : null);
  return item;
}

/** Show subagent `id` of `run` in the dialog. */
export function openSubagent(run, id, fromTrail = false) {
  const sub = find(run, id);
  if (!sub) return;
  if (!fromTrail) trail = sub.parent ? [...trail.filter((t) => t !== id), sub.parent] : [];
  const dialog = byId("subagent-dialog");
  fill(byId("subagent-heading"), `Subagent ${sub.trajectory_id}`);
  fill(byId("subagent-meta"), [sub.agent, sub.model].filter(Boolean).join(" \u00b7 ") || "agent not named",
    ` \u00b7 ${sub.steps.length} step${sub.steps.length === 1 ? "" : "s"}`);
  const list = clear(byId("subagent-steps"));
  list.append(...sub.steps.map((step) => renderStep(run, step)));
  wireSubagentButtons(run, list);
  const back = byId("subagent-back");
  back.hidden = !sub.parent;
  back.dataset.target = sub.parent || "";
  dialog.dataset.trajectoryId = sub.trajectory_id;
  if (!dialog.open) dialog.showModal();
}

let installed = false;

/** Wire the dialog's close and back buttons once. */
export function installSubagentDialog(run) {
  if (installed) return;
  installed = true;
  blockFor("subagent-dialog", true); // in its <template> until a step links a subagent
  byId("subagent-close").addEventListener("click", () => byId("subagent-dialog").close());
  byId("subagent-back").addEventListener("click", () => {
    const target = byId("subagent-back").dataset.target;
    if (target) openSubagent(run, target, true);
  });
}

