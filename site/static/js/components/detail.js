// The step detail: message, tool call (name, arguments), output and the diff of the written file.
//
// Long step texts: collapsed blocks expand on demand; texts the exporter moved out of the run file
// (step.lazy, docs/formats.md) load when asked for.
//
// Stable ids: #step-<field>-more (field: message, arguments, diff, output) loads the whole text;
// [data-loaded="1"] once it is shown whole. #step-<field>-expand (arguments, output) toggles
// the block's height limit (aria-expanded).

import { el, blockFor, byId, clear, fill } from "../lib/dom.js";
import { formatCount } from "../lib/format.js";
import { loadTextParts } from "../lib/data.js";
import { setLines } from "../lib/dom-update.js";

const OP_CLASS = { " ": "ctx", "+": "add", "-": "del" };

function hunkStarts(header) {
  const match = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(header);
  return match ? [Number(match[1]), Number(match[2])] : [null, null];
}

const DIFF_ROWS = 40; // rows of a diff drawn at first: its box (app.css: 13rem) shows about 10
const DIFF_CHUNK = 40; // rows drawn more each time the box is scrolled near the last drawn one
const DIFF_ROW_ESTIMATE = 18; // px a row takes, about (the spacer's height per row not drawn)

/** Every row of `diff` (hunk headers and lines, with their line numbers) as a function drawing it. */
function diffRows(diff, linkOf) {
  const rows = [];
  for (const [index, hunk] of diff.hunks.entries()) {
    rows.push(() => {
      const link = linkOf ? el("a", { class: "permalink", href: linkOf(index), "aria-label": `Link to hunk ${index + 1}` }, "#") : null;
      return el("tr", { class: "hunk-header", dataset: { hunk: String(index) } }, el("td", { colspan: "3" }, hunk.header, link ? " " : null, link));
    });
    rows[rows.length - 1].hunk = index;
    let [oldLine, newLine] = hunkStarts(hunk.header);
    if (oldLine === 0) oldLine = 1;
    if (newLine === 0) newLine = 1;
    for (const [op, text] of hunk.lines) {
      const oldNumber = op === "+" || oldLine === null ? "" : oldLine++;
      const newNumber = op === "-" || newLine === null ? "" : newLine++;
      const row = () => el(
        "tr",
        { class: ["diff-line", OP_CLASS[op] || "ctx"], dataset: { op, hunk: String(index) } },
        el("td", { class: "line-number" }, String(oldNumber)),
        el("td", { class: "line-number" }, String(newNumber)),
        el("td", { class: "line-text" }, el("span", { class: "op", "aria-hidden": "true" }, op), text),
      );
      row.hunk = index;
      rows.push(row);
    }
  }
  return rows;
}

/**
 * A <table> for a diff object {path, old_exists, hunks[{header, lines[[op, text]]}]}; every row
 * carries data-hunk (the hunk's index); with linkOf(index), each hunk header links to that hunk.
 * With `box` (the element that scrolls it), a long diff draws its first DIFF_ROWS rows and the
 * next ones as the box is scrolled near them (tr.diff-spacer keeps the height of the others);
 * table.drawHunk(index) draws every row up to hunk `index`'s last.
 */
export function renderDiff(diff, linkOf = null, box = null) {
  if (diff.hunks.length === 0) return el("p", { class: "muted" }, "No change: the file was written with the content it already had.");
  const rows = diffRows(diff, linkOf);
  const body = el("tbody");
  const table = el("table", { class: "diff-table", dataset: { rows: String(rows.length) } }, body);
  const spacer = el("tr", { class: "diff-spacer", "aria-hidden": "true" }, el("td", { colspan: "3" }));
  let drawn = 0;
  const draw = (upTo) => {
    const to = Math.min(upTo, rows.length);
    if (to <= drawn) return;
    const fragment = document.createDocumentFragment();
    for (const row of rows.slice(drawn, to)) fragment.append(row());
    drawn = to;
    body.insertBefore(fragment, spacer.parentNode ? spacer : null);
    if (drawn === rows.length) spacer.remove();
    else spacer.firstChild.style.height = `${(rows.length - drawn) * DIFF_ROW_ESTIMATE}px`;
  };
  body.append(spacer);
  draw(box ? DIFF_ROWS : rows.length);
  table.drawHunk = (index) => {
    let last = -1;
    rows.forEach((row, at) => { if (row.hunk <= index) last = at; });
    draw(last + 1);
  };
  if (box) {
    box.onscroll = () => {
      if (drawn < rows.length && box.scrollTop + 2 * box.clientHeight >= spacer.offsetTop) draw(drawn + DIFF_CHUNK);
    };
  }
  return table;
}

function argumentsText(args) {
  return JSON.stringify(args, null, 2);
}

/** Mark the rows of diff hunk `index` of the shown step (.hunk-highlight); null clears the mark. */
export function highlightHunk(index) {
  for (const row of document.querySelectorAll("#step-diff tr.hunk-highlight")) row.classList.remove("hunk-highlight");
  if (index === null || index === undefined) return;
  const table = document.querySelector("#step-diff table.diff-table");
  if (table && table.drawHunk) table.drawHunk(Number(index));
  for (const row of document.querySelectorAll(`#step-diff tr[data-hunk="${Number(index)}"]`)) row.classList.add("hunk-highlight");
}

/** Show step in the #step-detail section; hunkLink(index) gives each diff hunk's permalink. */
export function renderStepDetail(step, kind, hunkLink = null) {
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
  byId("step-arguments-details").open = true; // its first lines stay in the first screen, the diff below

  renderStepDiff(step, kind, hunkLink);
  const outputBox = byId("step-output-box");
  outputBox.hidden = step.output === null || step.output === undefined;
  setLines(byId("step-output"), step.output ?? "");
  renderOrphans(Array.isArray(step.orphans) ? step.orphans : []);
  renderConfig(step.config);
  if (!longTextsWired) {
    installLongTexts(showWholeText);
    longTextsWired = true;
  }
  updateLongTexts(step, byId("step-arguments").textContent, step.output ?? "");
}

/**
 * The step's diff, or that it changed no file. An alerting run's step always says what it
 * changed; a step of another kind shows the block only with a diff (an episode's page holds none).
 */
function renderStepDiff(step, kind, hunkLink) {
  const diffBox = blockFor("step-diff-box", Boolean(step.diff) || kind === "alerting");
  if (!diffBox) return;
  diffBox.hidden = !step.diff && kind !== "alerting";
  const diffTarget = clear(byId("step-diff"));
  if (step.diff) {
    fill(byId("step-diff-path"), step.diff.path);
    if (!step.diff.old_exists) diffTarget.append(el("p", { class: "muted new-file" }, "New file."));
    diffTarget.append(renderDiff(step.diff, hunkLink, diffTarget));
  } else {
    fill(byId("step-diff-path"), "");
    if (kind === "alerting") diffTarget.append(el("p", { class: "muted no-change" }, step.n === 0 ? "No change: the pristine repo, before any action." : "No change: this step changed no file."));
  }
}

/** Results in the step's observation that name no call of the step (the block from the first step with one). */
function renderOrphans(orphans) {
  const box = blockFor("step-orphans-box", orphans.length > 0);
  if (!box) return;
  box.hidden = orphans.length === 0;
  clear(byId("step-orphans")).append(...orphans.map((orphan) => el("li", { class: "orphan" },
    el("span", { class: "muted" }, orphan.call_id ? `names call ${orphan.call_id}: ` : "names no call: "),
    el("pre", { class: "text-block" }, String(orphan.content ?? "")))));
}

/** The step's config hygiene findings and inhibition version differences (step.config). */
function renderConfig(config) {
  const findings = config && Array.isArray(config.findings) ? config.findings : [];
  const differences = config && Array.isArray(config.version_differences) ? config.version_differences : [];
  const box = blockFor("step-config-box", findings.length + differences.length > 0);
  if (!box) return;
  box.hidden = findings.length + differences.length === 0;
  clear(byId("step-config")).append(
    ...findings.map((finding) => el("li", { class: "config-finding", "data-kind": String(finding.kind) },
      el("span", { class: "tag" }, String(finding.kind)), " ", el("code", null, String(finding.where)),
      `: ${String(finding.text)}`)),
    ...differences.map((difference) => el("li", { class: "version-difference" },
      el("span", { class: "tag" }, "version difference"), " ", el("code", null, String(difference.check)),
      // one text node, as a page's HTML writes it (exporter/run_page.py)
      ` (inhibit rule ${Number(difference.rule)}): ${Object.entries(difference.verdicts || {}).map(([version, muted]) =>
        `${version} ${muted ? "mutes" : "does not mute"} the target`).join("; ")}`)));
}

let longTextsWired = false;

function showWholeText(field, text, step) {
  if (field === "output") setLines(byId("step-output"), text);
  else if (field === "message") fill(byId("step-message"), text);
  else if (field === "arguments") fill(byId("step-arguments"), argumentsText(JSON.parse(text)));
  else if (field === "diff") {
    const diff = JSON.parse(text);
    const target = clear(byId("step-diff"));
    if (!diff.old_exists) target.append(el("p", { class: "muted new-file" }, "New file."));
    target.append(renderDiff(diff, null, target));
  }
}

// -- long texts --------------------------------------------------------------------------------
const LONG_LINES = 4; // the lines a block shows before it scrolls (app.css: 5rem); Expand shows it whole
const LONG_CHARS = 360;
let shownStep = null;

function isLong(text) {
  if (text.length > LONG_CHARS) return true;
  let lines = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) if (++lines > LONG_LINES) return true;
  return false;
}

function setExpand(field, text) {
  const button = byId(`step-${field}-expand`);
  const block = byId(`step-${field}`);
  const long = isLong(text);
  button.hidden = !long;
  block.classList.remove("expanded");
  button.setAttribute("aria-expanded", "false");
  if (button.textContent !== "Expand") fill(button, "Expand");
}

function wireExpand(field) {
  const button = byId(`step-${field}-expand`);
  button.addEventListener("click", () => {
    const block = byId(`step-${field}`);
    const expanded = block.classList.toggle("expanded");
    button.setAttribute("aria-expanded", expanded ? "true" : "false");
    fill(button, expanded ? "Collapse" : "Expand");
  });
}

/**
 * Wire the expand buttons once. `showWhole(field, text, step)` puts a whole text in place
 * (the detail view knows how to draw arguments and diffs).
 */
export function installLongTexts(showWhole) {
  wireExpand("arguments");
  wireExpand("output");
  // one listener for every "Show all" button, so a block put in place later (the diff's) needs no wiring
  byId("step-detail").addEventListener("click", async (event) => {
    const button = event.target instanceof Element ? event.target.closest("button.more-button") : null;
    const field = button && /^step-(message|arguments|diff|output)-more$/.exec(button.id)?.[1];
    const step = shownStep;
    const info = field && step && step.lazy && step.lazy[field];
    if (!info) return;
    button.disabled = true;
    fill(button, "Loading\u2026");
    try {
      const text = await loadTextParts(info.parts);
      if (shownStep !== step) return;
      showWhole(field, text, step);
      button.dataset.loaded = "1";
      button.hidden = true;
    } catch (error) {
      fill(button, `Could not load the whole text: ${error.message}`);
    } finally {
      button.disabled = false;
    }
  });
}

/** After a step is drawn: show "Show all" for texts kept outside the run file, "Expand" for long ones. */
export function updateLongTexts(step, argumentsText, outputText) {
  shownStep = step;
  setExpand("arguments", argumentsText);
  setExpand("output", outputText);
  for (const field of ["message", "arguments", "diff", "output"]) {
    const button = document.getElementById(`step-${field}-more`);
    if (!button) continue; // a block the page does not hold (no diff on an episode's page)
    const info = step.lazy && step.lazy[field];
    button.hidden = !info;
    button.dataset.loaded = "0";
    if (info) fill(button, `Show all ${formatCount(info.chars)} characters (shortened here)`);
    else if (button.firstChild) clear(button);
  }
}
