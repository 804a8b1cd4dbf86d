// The services table of an episode run's board (#episode-services, its columns laid out in
// site/templates/_episode_board.html): one row a service, cells changed since the previous step
// highlighted with the old value as their title, the service acted on marked. The version and
// last deploy are the rollback clues (the only ones on generated incidents); minutes degraded
// and the SLA breach flag are ARIA's own (tasks/base.py:115-129; sla_breach never changes).
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el, fill } from "../lib/dom.js";
import { isObject, list, serviceRows, showIf } from "../lib/episode-data.js";

const TEXT_FIELDS = new Set(["status", "sla", "sla_breach", "current_version", "last_deployed"]);

function number(value, digits) {
  if (typeof value !== "number" || !Number.isFinite(value)) return value === undefined || value === null ? "\u2014" : String(value);
  return digits === null ? String(value) : value.toFixed(digits);
}

function cellValue(row, field, sla) {
  if (field === "replicas") return `${number(row.replicas_running, null)}/${number(row.replicas_desired, null)}`;
  if (field === "sla") return sla[row.name] === undefined ? "\u2014" : String(sla[row.name]);
  if (field === "status") return row.status === undefined ? "\u2014" : String(row.status);
  if (field === "error_rate") return number(row.error_rate, 3);
  if (field === "latency_p99_ms") return number(row.latency_p99_ms, 0);
  if (field === "minutes_degraded") return number(row.minutes_degraded, 0);
  if (field === "sla_breach") return row.sla_breach === true ? "breach" : row.sla_breach === false ? "no" : "\u2014";
  if (field === "current_version" || field === "last_deployed") return row[field] === undefined || row[field] === null ? "\u2014" : String(row[field]);
  return number(row[field], 1);
}

function fieldChanged(changed, field) {
  if (field === "replicas") return changed.includes("replicas_running") || changed.includes("replicas_desired");
  return changed.includes(field);
}

function serviceCell(field, row, was, changed, sla, previousSla) {
  const isChanged = fieldChanged(changed, field);
  return el(
    "td",
    {
      class: [TEXT_FIELDS.has(field) ? null : "num", isChanged ? "changed" : null, field === "status" ? `status status-${row.status}` : null, field === "sla" ? `sla sla-${sla[row.name]}` : null],
      dataset: { field, changed: isChanged ? "1" : "0" },
      title: isChanged && was ? `was ${cellValue(was, field, previousSla)}` : null,
    },
    cellValue(row, field, sla),
  );
}

/** Fill the services table from the observation in force, compared with the previous one. */
export function renderServices(observation, previous, env) {
  const rows = serviceRows(observation);
  const shown = rows.length > 0;
  showIf(byId("episode-services-empty"), !shown);
  showIf(byId("episode-services"), shown);
  showIf(byId("episode-services-legend"), shown);
  const body = byId("episode-services").tBodies[0];
  if (!shown) {
    fill(body);
    return;
  }
  const fields = [...byId("episode-services").tHead.querySelectorAll("th[data-field]")].map((th) => th.dataset.field);
  const sla = isObject(observation.sla_status) ? observation.sla_status : {};
  const previousRows = new Map(serviceRows(previous).map((row) => [row.name, row]));
  const previousSla = previous && isObject(previous.sla_status) ? previous.sla_status : {};
  const changedBy = env && isObject(env.changed) && env.shown_from !== null ? env.changed : {};
  const fresh = env && env.observation ? env : null;
  fill(
    body,
    rows.map((row) => {
      const changed = fresh ? list(changedBy[row.name]) : [];
      const actedOn = env && env.acted_on === row.name;
      const cells = fields.map((field) => serviceCell(field, row, previousRows.get(row.name), changed, sla, previousSla));
      return el(
        "tr",
        { class: [actedOn ? "acted-on" : null], dataset: { service: row.name, actedOn: actedOn ? "1" : "0", new: fresh && list(env.new_services).includes(row.name) ? "1" : "0" } },
        el("th", { scope: "row" }, row.name, actedOn ? el("span", { class: "acted-mark" }, "acted on") : null),
        cells,
      );
    }),
  );
}
