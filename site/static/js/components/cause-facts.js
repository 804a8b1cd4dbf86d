// Why a check fails, in the check inspector: the cause the grader computed (grader/causes/,
// docs/formats.md "Causes": {kind, summary, why?, facts}) with its facts drawn as nested lists:
// what the replay saw (series, states, values), the route path amtool printed, the inhibit
// rules' matchers, the expected and actual receivers. The checks panel shows kind and summary;
// the facts are only here. Every text is set as textContent (facts come from the run file).
//
// Stable ids: #inspector-cause (hidden unless the check fails and has a cause),
// #inspector-cause-kind, #inspector-cause-summary, #inspector-cause-why, #inspector-cause-facts,
// #inspector-blame (the link to the change that broke it, as in the checks panel).

import { clear, el, fill } from "../lib/dom.js";
import { clip } from "../lib/format.js";
import { blameText } from "./checks.js";

const MAX_ITEMS = 12;
const MAX_DEPTH = 4;
const MAX_TEXT = 400;
const INSPECTOR_TEXT = 4000;

function isScalar(value) {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

function scalarText(value) {
  if (value === null) return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  return clip(String(value), MAX_TEXT);
}

function json(value) {
  return clip(JSON.stringify(value), MAX_TEXT);
}

/** A label set ({name: value} of strings) as Prometheus writes it: {a="b", c="d"} (its first
 * MAX_ITEMS labels). */
function labelSet(labels) {
  const entries = Object.entries(labels);
  const shown = entries.slice(0, MAX_ITEMS).map(([name, value]) => `${clip(name, 80)}=${JSON.stringify(clip(value, MAX_TEXT))}`);
  return `{${shown.join(", ")}${entries.length > MAX_ITEMS ? `, \u2026 ${entries.length - MAX_ITEMS} more` : ""}}`;
}

function isLabelSet(value) {
  return value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0
    && Object.values(value).every((v) => typeof v === "string");
}

function more(count) {
  return count > 0 ? el("li", { class: "muted" }, `and ${count} more`) : null;
}

function valueNode(key, value, depth) {
  if (isScalar(value)) return el("code", null, scalarText(value));
  if (depth >= MAX_DEPTH) return el("code", null, json(value));
  if (Array.isArray(value)) {
    if (value.length === 0) return el("span", { class: "muted" }, "none");
    if (key === "path" && value.every((line) => typeof line === "string")) {
      return el("pre", { class: "text-block cause-path" }, value.slice(0, 60).map((line) => clip(line, MAX_TEXT)).join("\n"));
    }
    if (value.every(isScalar)) {
      const shown = value.slice(0, MAX_ITEMS).map((item) => el("code", null, scalarText(item)));
      return el("span", { class: "fact-values" }, shown.flatMap((node, i) => (i ? [", ", node] : [node])),
        value.length > MAX_ITEMS ? ` and ${value.length - MAX_ITEMS} more` : null);
    }
    return el("ol", { class: "fact-items" }, value.slice(0, MAX_ITEMS).map((item) => el("li", null, valueNode(key, item, depth + 1))),
      more(value.length - MAX_ITEMS));
  }
  if (/labels$/.test(key) && isLabelSet(value)) return el("code", null, scalarText(labelSet(value)));
  return factList(value, depth + 1);
}

/** An object of facts as a <dl>: each key (underscores as spaces) and its value, nested lists
 * below; its first MAX_ITEMS entries. */
function factList(facts, depth) {
  const entries = Object.entries(facts || {});
  if (entries.length === 0) return el("span", { class: "muted" }, "none");
  const rest = entries.length - MAX_ITEMS;
  return el("dl", { class: "cause-facts" }, entries.slice(0, MAX_ITEMS).map(([key, value]) => [
    el("dt", null, clip(key, 80).replace(/_/g, " ")),
    el("dd", null, valueNode(key, value, depth)),
  ]), rest > 0 ? [el("dt", null, "\u2026"), el("dd", { class: "muted" }, `and ${rest} more`)] : null);
}

/**
 * The inspector's cause box for `cause` ({kind, summary, why?, facts?}) and `blame` ({href, text}
 * or null): children for #inspector-cause.
 */
export function causeChildren(cause, blame) {
  const facts = cause.facts && typeof cause.facts === "object" && !Array.isArray(cause.facts) ? cause.facts : null;
  return [
    el("h3", null, "Why it fails"),
    el("p", { class: "check-cause" }, el("span", { class: "cause-kind", id: "inspector-cause-kind" }, clip(cause.kind || "", 80)),
      " ", el("span", { id: "inspector-cause-summary" }, clip(cause.summary || "", INSPECTOR_TEXT))),
    typeof cause.why === "string" && cause.why ? el("p", { class: "muted", id: "inspector-cause-why" }, clip(cause.why, INSPECTOR_TEXT)) : null,
    blame ? el("p", { class: "check-blame" }, el("a", { class: "blame-link", id: "inspector-blame", href: blame.href }, blame.text)) : null,
    facts ? el("details", { class: "cause-facts-box", open: true }, el("summary", null, "What the grader found"),
      el("div", { id: "inspector-cause-facts" }, factList(facts, 0))) : null,
  ];
}

/**
 * Wire the cause box `box` (#inspector-cause); returns show(why): why is run.js whyOf's
 * {cause, blame, href} of the selected failing check, or null (the box is hidden). The blame
 * link's click calls onBlame(blame) instead of following the link.
 */
export function causeBox(box, onBlame) {
  let shownWhy = null;
  box.addEventListener("click", (event) => {
    const link = event.target instanceof Element ? event.target.closest("a.blame-link") : null;
    if (!link || !shownWhy || !shownWhy.blame) return;
    event.preventDefault();
    onBlame(shownWhy.blame);
  });
  return function show(why) {
    const cause = why && why.cause;
    if (shownWhy === why || (why && shownWhy && cause === shownWhy.cause && why.href === shownWhy.href)) return;
    shownWhy = why;
    box.hidden = !cause;
    if (!cause) {
      clear(box);
      return;
    }
    fill(box, ...causeChildren(cause, why.blame ? { href: why.href, text: blameText(why.blame) } : null));
  };
}
