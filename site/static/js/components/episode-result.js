// The action's result in the step detail of an episode run (#episode-result, laid out in
// site/templates/_episode_result.html): server errors, retries, last_action_result / _error with
// their stale notes, and the step's penalties.
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el, fill } from "../lib/dom.js";
import { list } from "../lib/episode-data.js";

function staleNote(field, since) {
  return el(
    "p",
    { class: "stale-note" },
    el("span", { class: "badge badge-stale" }, "stale"),
    ` Same text as after step ${since}. ARIA keeps ${field} until an action sets it again, so this may describe step ${since}\u2019s action, not this one.`,
  );
}

function resultField(id, label, value, since, field) {
  const stale = since !== null && since !== undefined;
  return el(
    "div",
    { class: ["result-field", stale ? "is-stale" : null] },
    el("h4", null, label, " ", el("code", null, field)),
    el("pre", { id, class: "text-block result-text", dataset: { stale: stale ? "1" : "0" } }, value),
    stale ? staleNote(field, since) : null,
  );
}

function serverError(env) {
  const where = env.error.status === null || env.error.status === undefined ? "an error message" : `HTTP ${env.error.status}`;
  return el(
    "p",
    { id: "episode-server-error", class: "episode-alert", role: "note" },
    el("strong", null, "The server failed this action "),
    `(${where}): `,
    el("code", null, String(env.error.message ?? "")),
    `. The environment did not advance and gave no reward; the state below is still step ${env.shown_from}\u2019s.`,
  );
}

function observationFields(env) {
  const observation = env.observation;
  const result = observation.last_action_result;
  const error = observation.last_action_error;
  return [
    resultField("episode-result-text", "Result", result === null || result === undefined ? "(none)" : String(result), env.stale && env.stale.last_action_result, "last_action_result"),
    error === null || error === undefined
      ? null
      : resultField("episode-error-text", "Error", String(error), env.stale && env.stale.last_action_error, "last_action_error"),
  ];
}

function penaltyList(env) {
  const penalties = list(env.penalties);
  if (!penalties.length) return null;
  return [
    el("h4", null, "Penalties this step"),
    el("ul", { id: "episode-penalties", class: "chip-list" }, penalties.map((kind) => el("li", { class: "chip chip-penalty", dataset: { kind } }, kind))),
  ];
}

function finding(env) {
  return el(
    "p",
    { id: "episode-finding", class: env.accepted ? "muted" : "episode-alert" },
    env.accepted
      ? `The observer’s finding ${env.finding_index} was accepted (a flat ${env.observer_reward} to the observer; it changes no total). The responder sees it in its view from its next step on.`
      : `The server refused this finding: ${String(env.refused ?? "")}.`,
  );
}

/** Show what the environment answered to step n's action in #episode-result-body. */
export function renderResult(run, n) {
  const step = run.steps[n];
  const env = step.env;
  const body = byId("episode-result-body");
  if (!env) {
    fill(body, el("p", { class: "muted" }, "This step carries no environment data."));
    return;
  }
  const transport = env.transport || {};
  fill(
    body,
    env.error ? serverError(env) : null,
    transport.retried_after
      ? el("p", { id: "episode-retry", class: "muted small" }, `The first attempt lost its connection (${transport.retried_after}); it was retried on a new connection.`)
      : null,
    n === 0 && step.source === "user"
      ? el("p", { class: "muted" }, "The state after /reset, before any action.")
      : env.agent === "observer" ? finding(env) : env.observation ? observationFields(env) : null,
    penaltyList(env),
  );
}
