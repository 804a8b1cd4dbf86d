// Model runs: what the model and its endpoint were, the tokens it used, and each reply as it came.
//
// Reads run.llm ({endpoint: {server, server_version, models, model_file: {path, bytes, sha256}},
// turns, prompt_tokens, completion_tokens, cost_usd, steps_without_usage, malformed_calls,
// quirks: {code: turns}}) and step.llm ({model, prompt_tokens, completion_tokens, cached_tokens,
// cost_usd, finish_reason, llm_calls, quirks: [{code, text}], malformed, raw_reply, raw_replies,
// replies, stopped, implicit_submit}), written by exporter/llm_turns.py.
//
// Stable ids and data attributes (tests rely on them):
//   #run-model            absent or hidden unless the run has a model's steps; #run-model-meta its figures:
//                         div[data-field=model|server|model-sha256|turns|prompt-tokens|completion-tokens|cost|malformed]
//   #run-model-quirks     "Reply quirks: ..." span.badge[data-quirk=code] with the count of turns
//   #step-model-box       absent or hidden unless the step came from a model; #step-model-figures the
//                         tokens and finish reason (span[data-field=...]); #step-model-quirks
//                         li.model-quirk[data-quirk=code]; #step-model-raw the raw reply JSON
//
// Every string from a run is inserted as text (dom.js).

import { blockFor, byId, el, fill } from "../lib/dom.js";
import { formatCount as count } from "../lib/format.js";

function figure(field, name, value) {
  return el("div", { dataset: { field } }, el("dt", null, name), el("dd", null, value));
}

function serverText(endpoint) {
  if (!endpoint) return "not reported";
  const name = endpoint.server || "unnamed server";
  return endpoint.server_version ? `${name} ${endpoint.server_version}` : name;
}

/**
 * Show the box with this id when there is data for it (false without data or box). The box waits
 * in its <template> until a run or step has data for it (lib/dom.js blockFor).
 */
function showBox(id, data) {
  const box = blockFor(id, Boolean(data));
  if (!box) return false;
  box.hidden = !data;
  return Boolean(data);
}

/** The run's model panel (hidden for runs no model made). */
export function renderRunModel(run) {
  const llm = run.llm;
  if (!showBox("run-model", llm)) return;
  const endpoint = llm.endpoint || null;
  const file = endpoint && endpoint.model_file;
  const items = [
    figure("model", "Model", run.model ?? "\u2014"),
    figure("server", "Server", serverText(endpoint)),
    figure("model-sha256", "Model file sha256", file
      ? el("code", { title: `${file.path} (${count(file.bytes)} bytes)` }, file.sha256)
      : "not reported"),
    figure("turns", "Model turns", count(llm.turns)),
    figure("prompt-tokens", "Prompt tokens", count(llm.prompt_tokens)),
    figure("completion-tokens", "Completion tokens", count(llm.completion_tokens)),
    figure("malformed", "Malformed tool calls", count(llm.malformed_calls)),
  ];
  if (typeof llm.cost_usd === "number") items.splice(6, 0, figure("cost", "Cost", `$${llm.cost_usd.toFixed(6)}`));
  if (llm.steps_without_usage) items.push(figure("no-usage", "Turns without usage", count(llm.steps_without_usage)));
  fill(byId("run-model-meta"), items);
  const quirks = Object.entries(llm.quirks || {});
  fill(byId("run-model-quirks"), quirks.length === 0 ? "Every reply was a well-formed tool call." : [
    "Reply quirks: ",
    quirks.map(([code, n]) => el("span", { class: ["badge", "badge-changed"], dataset: { quirk: code } }, `${code} \u00d7${n}`)),
  ]);
}

function stepFigures(part) {
  const items = [];
  const add = (field, text) => items.push(el("span", { dataset: { field } }, text));
  if (part.model) add("model", part.model);
  if (typeof part.prompt_tokens === "number") add("prompt-tokens", `${count(part.prompt_tokens)} prompt tokens`);
  if (typeof part.completion_tokens === "number") add("completion-tokens", `${count(part.completion_tokens)} completion tokens`);
  if (typeof part.cached_tokens === "number" && part.cached_tokens) add("cached-tokens", `${count(part.cached_tokens)} cached`);
  if (typeof part.cost_usd === "number") add("cost", `$${part.cost_usd.toFixed(6)}`);
  if (part.finish_reason) add("finish-reason", `finish_reason ${part.finish_reason}`);
  if (part.llm_calls > 1) add("llm-calls", `${part.llm_calls} inferences`);
  if (!part.llm_calls) add("llm-calls", "same turn as the step before (no new inference)");
  if (part.implicit_submit) add("implicit-submit", "ended by the recorder (implicit submit)");
  return items.flatMap((item, index) => (index ? [" \u00b7 ", item] : [item]));
}

function rawText(part) {
  const raw = {};
  if (part.raw_reply) raw.reply = part.raw_reply;
  if (part.raw_replies) raw.replies_without_tool_call = part.raw_replies;
  else if (part.replies) raw.replies_without_tool_call = part.replies;
  if (part.stopped) raw.stopped = part.stopped;
  return Object.keys(raw).length ? JSON.stringify(raw, null, 2) : null;
}

/** The current step's model turn (hidden for steps no model made). */
export function renderModelTurn(step) {
  const part = step.llm;
  if (!showBox("step-model-box", part)) return;
  fill(byId("step-model-figures"), stepFigures(part));
  fill(byId("step-model-quirks"), part.quirks.map((quirk) => el("li", { class: "model-quirk", dataset: { quirk: quirk.code } },
    el("span", { class: ["badge", "badge-changed"] }, quirk.code), " ", quirk.text)));
  const raw = rawText(part);
  const rawBox = byId("step-model-raw-box");
  rawBox.hidden = raw === null;
  fill(byId("step-model-raw"), raw ?? "");
}
