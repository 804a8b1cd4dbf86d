// The ATIF parts of the shown step beyond tool call and output: copied context, the Harbor
// trial step it belongs to, media parts, and links to the subagents it spawned.
//
// Stable ids: #step-atif-box (absent until a step has some, hidden when the step has none), #step-copied, #step-section,
// #step-media, #step-subagents.

import { blockFor, byId, clear, fill } from "../lib/dom.js";
import { renderMediaParts } from "./media-parts.js";
import { installSubagentDialog, subagentButtons, wireSubagentButtons } from "./subagent-view.js";

/**
 * Draw `step`'s parts into #step-atif-box (run: the run or head document). The box is put in
 * place by the first step that has any (lib/dom.js blockFor); an episode's page holds none.
 */
export function renderStepAtif(step, run) {
  const parts = renderMediaParts(step.media);
  const subagents = Array.isArray(step.subagents) ? step.subagents : [];
  const box = blockFor("step-atif-box", Boolean(step.copied || step.section || parts || subagents.length));
  if (!box) return;
  byId("step-copied").hidden = !step.copied;
  const section = byId("step-section");
  section.hidden = !step.section;
  fill(section, step.section ? `Trial step: ${step.section}` : "");
  const media = clear(byId("step-media"));
  if (parts) media.append(parts);
  const subs = clear(byId("step-subagents"));
  if (subagents.length) {
    installSubagentDialog(run);
    subs.append(...subagentButtons(run, subagents));
    wireSubagentButtons(run, subs);
  }
  box.hidden = !(step.copied || step.section || parts || subs.childElementCount);
}
