// Why a check fails, in the check inspector: the cause the grader computed (grader/causes/,
// docs/formats.md "Causes": {kind, summary, why?, facts}) with its facts drawn as nested lists:
// what the replay saw (series, states, values), the route path amtool printed, the inhibit
// rules' matchers, the expected and actual receivers. The checks panel shows kind and summary;
// the facts are only here. Every text is set as textContent (facts come from the run file).
//
// Stable ids: #inspector-cause (hidden unless the check fails and has a cause),
// #inspector-cause-kind, #inspector-cause-summary, #inspector-cause-why, #inspector-cause-facts,
// #inspector-blame (the link to the change that broke it, as in the checks panel).

import { el } from "../lib/dom.js";

const MAX_ITEMS = 12;
const MAX_DEPTH = 4;
const MAX_TEXT = 400;

function isScalar(value) {
  return value === null || ["string", "number", "boolean"].includes(typeof value);
}

function scalarText(value) {
  if (value === null) return "none";
  if (typeof value === "boolean") return value ? "yes" : "no";
  const text = String(value);
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\u2026` : text;
}

function json(value) {
  const text = JSON.stringify(value);
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\u2026` : text;
}

/** A label set ({name: value} of strings) as Prometheus writes it: {a="b", c="d"}. */
function labelSet(labels) {
  return `{${Object.entries(labels).map(([name, value]) => `${name}=${JSON.stringify(value)}`).join(", ")}}`;
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
      return el("pre", { class: "text-block cause-path" }, value.slice(0, 60).join("\n"));
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

/** An object of facts as a <dl>: each key (underscores as spaces) and its value, nested lists below. */
function factList(facts, depth) {
  const entries = Object.entries(facts || {});
  if (entries.length === 0) return el("span", { class: "muted" }, "none");
  return el("dl", { class: "cause-facts" }, entries.map(([key, value]) => [
    el("dt", null, key.replace(/_/g, " ")),
    el("dd", null, valueNode(key, value, depth)),
  ]));
}

/**
 * The inspector's cause box for `cause` ({kind, summary, why?, facts?}) and `blame` ({href, text}
 * or null): children for #inspector-cause.
 */
export function causeChildren(cause, blame) {
  const facts = cause.facts && typeof cause.facts === "object" && !Array.isArray(cause.facts) ? cause.facts : null;
  return [
    el("h3", null, "Why it fails"),
    el("p", { class: "check-cause" }, el("span", { class: "cause-kind", id: "inspector-cause-kind" }, String(cause.kind || "")),
      " ", el("span", { id: "inspector-cause-summary" }, String(cause.summary || ""))),
    typeof cause.why === "string" && cause.why ? el("p", { class: "muted", id: "inspector-cause-why" }, cause.why) : null,
    blame ? el("p", { class: "check-blame" }, el("a", { class: "blame-link", id: "inspector-blame", href: blame.href }, blame.text)) : null,
    facts ? el("details", { class: "cause-facts-box", open: true }, el("summary", null, "What the grader found"),
      el("div", { id: "inspector-cause-facts" }, factList(facts, 0))) : null,
  ];
}
