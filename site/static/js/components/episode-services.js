// The services table of an episode run's board (#episode-services, its columns laid out in
// site/templates/_episode_board.html): one row a service, cells changed since the previous step
// highlighted with the old value as their title, the service acted on marked. The version and
// last deploy are the rollback clues (the only ones on generated incidents); minutes degraded
// and the SLA breach flag are ARIA's own (tasks/base.py:115-129; sla_breach never changes).
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el, fill } from "../lib/dom.js";
import { isObject, list, serviceRows } from "../lib/episode-data.js";
import { refillOnChange, setAttr, setHidden, setText } from "../lib/dom-update.js";

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

/** What one cell shows: {className, changed, title, text} (a td's class, data-changed, title, text). */
function cellState(field, row, was, changed, sla, previousSla) {
  const isChanged = fieldChanged(changed, field);
  const classes = [TEXT_FIELDS.has(field) ? null : "num", isChanged ? "changed" : null, field === "status" ? `status status-${row.status}` : null, field === "sla" ? `sla sla-${sla[row.name]}` : null];
  return {
    className: classes.filter(Boolean).join(" "),
    changed: isChanged ? "1" : "0",
    title: isChanged && was ? `was ${cellValue(was, field, previousSla)}` : null,
    text: cellValue(row, field, sla),
  };
}

function applyCell(td, cell) {
  setAttr(td, "class", cell.className);
  setAttr(td, "data-changed", cell.changed);
  setAttr(td, "title", cell.title);
  setText(td, cell.text);
}

function applyRow(tr, row, actedOn, isNew, cells) {
  setAttr(tr, "class", actedOn ? "acted-on" : "");
  setAttr(tr, "data-acted-on", actedOn ? "1" : "0");
  setAttr(tr, "data-new", isNew ? "1" : "0");
  const [th, ...tds] = tr.children;
  refillOnChange(th, actedOn ? "1" : "0", () => fill(th, row.name, actedOn ? el("span", { class: "acted-mark" }, "acted on") : null));
  cells.forEach((cell, index) => applyCell(tds[index], cell));
}

/**
 * Fill the services table from the observation in force, compared with the previous one. The
 * rows stay from step to step while the services and columns do (one row a service, in the
 * observation's order); their cells are updated in place.
 */
export function renderServices(observation, previous, env) {
  const rows = serviceRows(observation);
  const shown = rows.length > 0;
  setHidden(byId("episode-services-empty"), shown);
  setHidden(byId("episode-services"), !shown);
  setHidden(byId("episode-services-legend"), !shown);
  const table = byId("episode-services");
  const body = table.tBodies[0];
  const fields = [...table.tHead.querySelectorAll("th[data-field]")].map((th) => th.dataset.field);
  refillOnChange(body, JSON.stringify([rows.map((row) => row.name), fields]), () => fill(body, rows.map((row) => el(
    "tr", { dataset: { service: row.name } }, el("th", { scope: "row" }), fields.map((field) => el("td", { dataset: { field } }))))));
  if (!shown) return;
  const sla = isObject(observation.sla_status) ? observation.sla_status : {};
  const previousRows = new Map(serviceRows(previous).map((row) => [row.name, row]));
  const previousSla = previous && isObject(previous.sla_status) ? previous.sla_status : {};
  const changedBy = env && isObject(env.changed) && env.shown_from !== null ? env.changed : {};
  const fresh = env && env.observation ? env : null;
  rows.forEach((row, index) => {
    const changed = fresh ? list(changedBy[row.name]) : [];
    const actedOn = Boolean(env && env.acted_on === row.name);
    const isNew = Boolean(fresh && list(env.new_services).includes(row.name));
    applyRow(body.rows[index], row, actedOn, isNew, fields.map((field) => cellState(field, row, previousRows.get(row.name), changed, sla, previousSla)));
  });
}
