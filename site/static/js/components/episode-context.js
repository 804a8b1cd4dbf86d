// The context panels of an episode run's board (site/templates/_episode_board.html): the
// runbooks read up to the step shown (ARIA answers a runbook it does not list "not found" in
// last_action_error, and some tasks pay for it anyway: tasks/base.py:214-308), the runbooks the
// observation offers, and the incident clock (elapsed_minutes = 2 x step, tasks/base.py:178).
//
// Stable ids: #episode-runbooks-read li[data-step][data-found="1"|"0"], #episode-runbooks-available,
// #episode-clock (dt/dd pairs).
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el, fill } from "../lib/dom.js";
import { list } from "../lib/episode-data.js";
import { refillOnChange, setHidden, setText } from "../lib/dom-update.js";
import { formatDelta } from "../lib/format.js";

/** The read_runbook steps up to n: [{n, runbook, found, reward}]. */
export function runbooksRead(run, n) {
  const read = [];
  for (const step of run.steps.slice(1, n + 1)) {
    const tool = step.tool || {};
    if (tool.name !== "read_runbook") continue;
    const env = step.env || {};
    const error = env.observation && env.observation.last_action_error;
    const stale = env.stale && env.stale.last_action_error;
    const missing = typeof error === "string" && error.includes("not found") && (stale === null || stale === undefined);
    read.push({ n: step.n, runbook: String((tool.arguments || {}).runbook ?? ""), found: !env.error && !missing, reward: step.reward });
  }
  return read;
}

/** Fill the runbooks and the clock for step n (observation: the one in force). */
export function renderContext(run, n, observation) {
  const read = runbooksRead(run, n);
  setHidden(byId("episode-runbooks-none"), read.length > 0);
  setHidden(byId("episode-runbooks-read"), !read.length);
  const target = byId("episode-runbooks-read");
  refillOnChange(target, JSON.stringify(read), () => fill(target, read.map((entry) => el("li", { dataset: { step: String(entry.n), found: entry.found ? "1" : "0" } },
    el("span", { class: "badge badge-changed" }, `step ${entry.n}`), " ", el("code", null, entry.runbook),
    entry.found ? "" : el("span", { class: "badge badge-fail" }, "not found"),
    el("span", { class: "muted" }, ` reward ${formatDelta(entry.reward)}`)))));
  const offered = list(observation && observation.available_runbooks).map(String);
  setText(byId("episode-runbooks-available"), offered.length ? `Available in the observation: ${offered.join(", ")}.` : "The observation lists no runbooks.");
  const o = observation || {};
  const pairs = [
    ["Step", `${o.step ?? "\u2014"} of ${o.max_steps ?? "?"}`],
    ["Elapsed", typeof o.elapsed_minutes === "number" ? `${o.elapsed_minutes} minutes` : "\u2014"],
    ["Incident start", String(o.incident_start_time ?? "\u2014")],
    ["SLA", Object.entries(o.sla_status && typeof o.sla_status === "object" ? o.sla_status : {}).filter(([, v]) => v !== "ok").map(([k, v]) => `${k} ${v}`).join(", ") || "all ok"],
  ];
  const clock = byId("episode-clock");
  refillOnChange(clock, JSON.stringify(pairs), () => fill(clock, pairs.map(([name, value]) => [el("dt", null, name), el("dd", null, value)])));
}
