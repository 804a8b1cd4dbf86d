// The step detail: message, tool call (name, arguments), output and the diff of the written file.

import { el, byId, clear, fill } from "./dom.js";
import { installLongTexts, updateLongTexts } from "./longtext.js";

const OP_CLASS = { " ": "ctx", "+": "add", "-": "del" };

function hunkStarts(header) {
  const match = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(header);
  return match ? [Number(match[1]), Number(match[2])] : [null, null];
}

/** A <table> for a diff object {path, old_exists, hunks[{header, lines[[op, text]]}]}. */
export function renderDiff(diff) {
  if (diff.hunks.length === 0) return el("p", { class: "muted" }, "No change: the file was written with the content it already had.");
  const body = el("tbody");
  for (const hunk of diff.hunks) {
    body.append(el("tr", { class: "hunk-header" }, el("td", { colspan: "3" }, hunk.header)));
    let [oldLine, newLine] = hunkStarts(hunk.header);
    if (oldLine === 0) oldLine = 1;
    if (newLine === 0) newLine = 1;
    for (const [op, text] of hunk.lines) {
      const oldNumber = op === "+" || oldLine === null ? "" : oldLine++;
      const newNumber = op === "-" || newLine === null ? "" : newLine++;
      body.append(
        el(
          "tr",
          { class: ["diff-line", OP_CLASS[op] || "ctx"], dataset: { op } },
          el("td", { class: "line-number" }, String(oldNumber)),
          el("td", { class: "line-number" }, String(newNumber)),
          el("td", { class: "line-text" }, el("span", { class: "op", "aria-hidden": "true" }, op), text),
        ),
      );
    }
  }
  return el("table", { class: "diff-table" }, body);
}

function argumentsText(args) {
  return JSON.stringify(args, null, 2);
}

/** Show step in the #step-detail section. */
export function renderStepDetail(step, kind) {
  fill(byId("step-heading"), `Step ${step.n}`);
  const toolName = byId("step-tool");
  if (step.tool) fill(toolName, step.tool.name);
  else fill(toolName, step.n === 0 ? "initial state" : "");
  toolName.dataset.source = step.source;

  const message = byId("step-message");
  const note = step.n === 0 && step.source === "user"
    ? (kind === "alerting" ? "The instruction given to the agent; the grade here is the pristine repo's, before any action." : "The instruction given to the agent: the state before any action.")
    : "";
  fill(message, step.n === 0 ? note : step.message);
  message.hidden = message.textContent === "";

  const argumentsBox = byId("step-arguments-box");
  argumentsBox.hidden = !step.tool;
  fill(byId("step-arguments"), step.tool ? argumentsText(step.tool.arguments) : "");
  byId("step-arguments-details").open = !(step.diff && step.diff.hunks.length > 0);

  const diffBox = byId("step-diff-box");
  diffBox.hidden = !step.diff;
  const diffTarget = clear(byId("step-diff"));
  if (step.diff) {
    fill(byId("step-diff-path"), step.diff.path);
    if (!step.diff.old_exists) diffTarget.append(el("p", { class: "muted new-file" }, "New file."));
    diffTarget.append(renderDiff(step.diff));
  } else {
    fill(byId("step-diff-path"), "");
  }

  const outputBox = byId("step-output-box");
  outputBox.hidden = step.output === null || step.output === undefined;
  fill(byId("step-output"), step.output ?? "");
  if (!longTextsWired) {
    installLongTexts(showWholeText);
    longTextsWired = true;
  }
  updateLongTexts(step, byId("step-arguments").textContent, step.output ?? "");
}

let longTextsWired = false;

function showWholeText(field, text, step) {
  if (field === "output") fill(byId("step-output"), text);
  else if (field === "message") fill(byId("step-message"), text);
  else if (field === "arguments") fill(byId("step-arguments"), argumentsText(JSON.parse(text)));
  else if (field === "diff") {
    const diff = JSON.parse(text);
    const target = clear(byId("step-diff"));
    if (!diff.old_exists) target.append(el("p", { class: "muted new-file" }, "New file."));
    target.append(renderDiff(diff));
  }
}
