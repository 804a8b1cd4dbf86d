// The ATIF parts of the shown step beyond tool call and output: copied context, the Harbor
// trial step it belongs to, media parts, and links to the subagents it spawned.
//
// Stable ids: #step-atif-box (hidden when the step has none), #step-copied, #step-section,
// #step-media, #step-subagents.

import { byId, clear, fill } from "../lib/dom.js";
import { renderMediaParts } from "./media-parts.js";
import { installSubagentDialog, subagentButtons, wireSubagentButtons } from "./subagent-view.js";

/** Draw `step`'s parts into #step-atif-box (run: the run or head document). */
export function renderStepAtif(step, run) {
  const box = byId("step-atif-box");
  const copied = byId("step-copied");
  copied.hidden = !step.copied;
  const section = byId("step-section");
  section.hidden = !step.section;
  fill(section, step.section ? `Trial step: ${step.section}` : "");
  const media = clear(byId("step-media"));
  const parts = renderMediaParts(step.media);
  if (parts) media.append(parts);
  const subs = clear(byId("step-subagents"));
  if (Array.isArray(step.subagents) && step.subagents.length) {
    installSubagentDialog(run);
    subs.append(...subagentButtons(run, step.subagents));
    wireSubagentButtons(run, subs);
  }
  box.hidden = !(step.copied || step.section || parts || subs.childElementCount);
}
