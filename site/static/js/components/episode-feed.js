// The lists of an episode run's board (laid out in site/templates/_episode_board.html): active
// alerts (new and cleared ones marked), recent logs by service, and the evidence log.
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el, fill } from "../lib/dom.js";
import { isObject, list } from "../lib/episode-data.js";
import { refillOnChange, setHidden, setText } from "../lib/dom-update.js";

function alertItem(alert, isNew) {
  return el(
    "li",
    { class: ["alert", `severity-${alert.severity}`], dataset: { alertId: String(alert.id), new: isNew ? "1" : "0" } },
    el("span", { class: "badge badge-severity" }, String(alert.severity ?? "?")),
    " ",
    el("code", null, String(alert.id ?? "")),
    " ",
    el("strong", null, String(alert.service ?? "")),
    isNew ? el("span", { class: "changed-mark" }, "new") : null,
    alert.acknowledged ? el("span", { class: "badge badge-muted" }, "acknowledged") : null,
    el("div", { class: "alert-message" }, String(alert.message ?? "")),
  );
}

/**
 * What the alerts, logs and evidence lists show at step n: the observation in force, or in a
 * dual-agent run, whose responder view has no alerts, logs or evidence (ARIA's
 * multi-agent/session.py get_observation_b), the observer's view in force (env.observer_from,
 * exporter/episodes.py), said in a note. Returns {observation, env} (env null for the observer's
 * view: its new/cleared marks belong to the responder's steps).
 */
export function feedView(source, n, observation, env) {
  const note = byId("episode-feed-note");
  const from = env ? env.observer_from : null;
  const owner = Number.isInteger(from) && source.steps[from] ? source.steps[from].env : null;
  const view = owner && isObject(owner.observer_observation) ? owner.observer_observation : null;
  const useObserver = view !== null && !(observation && Array.isArray(observation.active_alerts));
  setText(note, setHidden(note, !useObserver) ? `As the observer saw them in its view after step ${from} (the responder\u2019s view holds no alerts, logs or evidence).` : "");
  return useObserver ? { observation: view, env: null } : { observation, env };
}

/** The active alerts of the observation in force, and those cleared at this step. */
export function renderAlerts(observation, env) {
  const alerts = list(observation && observation.active_alerts).filter(isObject);
  const fresh = env && env.observation ? env : null;
  const isNew = new Set(fresh ? list(env.alerts_new) : []);
  setHidden(byId("episode-alerts-none"), alerts.length > 0);
  setHidden(byId("episode-alerts"), !alerts.length);
  const flags = alerts.map((alert) => isNew.has(String(alert.id)));
  const target = byId("episode-alerts");
  refillOnChange(target, JSON.stringify([alerts, flags]), () => fill(target, alerts.map((alert, index) => alertItem(alert, flags[index]))));
  const cleared = fresh ? list(env.alerts_cleared) : [];
  const clearedNote = byId("episode-alerts-cleared");
  setText(clearedNote, setHidden(clearedNote, !cleared.length) ? `Cleared since the previous step: ${cleared.join(", ")}.` : "");
}

/** The recent logs of the observation in force, one block a service. */
export function renderLogs(observation) {
  const logs = observation && isObject(observation.recent_logs) ? observation.recent_logs : {};
  const names = Object.keys(logs);
  setHidden(byId("episode-logs-none"), names.length > 0);
  const body = byId("episode-logs-body");
  refillOnChange(body, JSON.stringify(names), () => fill(body, names.map((name) => el("div", { class: "log-service", dataset: { service: name } }, el("h4", null, name), el("pre", { class: "text-block log-lines" })))));
  names.forEach((name, index) => setText(body.children[index].lastElementChild, list(logs[name]).map(String).join("\n")));
}

function evidenceItem(entry, isNew) {
  return el(
    "li",
    { dataset: { step: String(entry.step ?? ""), new: isNew ? "1" : "0" } },
    el("span", { class: "muted" }, `step ${entry.step ?? "?"} \u00b7 `),
    el("code", null, String(entry.source ?? "")),
    isNew ? el("span", { class: "changed-mark" }, "new") : null,
    el("div", null, String(entry.summary ?? "")),
    entry.raw ? el("details", null, el("summary", null, "Raw"), el("pre", { class: "text-block" }, String(entry.raw))) : null,
  );
}

/** The evidence log of the observation in force, entries added at this step marked new. */
export function renderEvidence(observation, env) {
  const evidence = list(observation && observation.evidence_log).filter(isObject);
  const fresh = env && env.observation ? env.evidence_new || 0 : 0;
  setHidden(byId("episode-evidence-none"), evidence.length > 0);
  setHidden(byId("episode-evidence"), !evidence.length);
  const target = byId("episode-evidence");
  refillOnChange(target, JSON.stringify([evidence, fresh]), () => fill(target, evidence.map((entry, index) => evidenceItem(entry, index >= evidence.length - fresh))));
}
