// Action-episode view (runs of kind "episode", e.g. ARIA): what the environment showed at each step.
//
// run.js calls mountEpisodeView(run) once (null for other kinds) and the returned update(n)
// on every step change. The data is the run file's steps[n].env (exporter/episodes.py) and
// run.final.episode (the final score and its parts, recorder/episodes/writer.py).
//
// Stable ids and data attributes (tests rely on them):
//   #run-view.episode-mode          set while an episode is shown
//   #episode-result                 in #step-detail: the action's result
//     #episode-result-text[data-stale="1"|"0"], #episode-error-text[data-stale]   last_action_result / _error;
//     .stale-note says which step a stale value is left over from
//     #episode-server-error         shown when the server failed this action (no observation)
//     #episode-retry                shown when the request was retried on a new connection
//     #episode-penalties li[data-kind]
//   #episode-score                  aside: #episode-step-reward, #episode-running-total,
//     #episode-incident[data-state="start"|"ongoing"|"resolved"|"ended"|"stopped"],
//     #episode-final-score, #episode-parts tr[data-part], #episode-unlocked li, #episode-ground-truth
//   #episode-board                  #episode-observation-note (observation from an earlier step),
//     #episode-services tr[data-service][data-acted-on][data-new] td[data-field][data-changed][title="was …"],
//     #episode-map-svg g.map-node[data-service][data-status][data-acted-on], path.map-edge[data-from][data-to],
//     #episode-alerts li[data-alert-id][data-new], #episode-alerts-cleared,
//     #episode-logs .log-service[data-service], #episode-evidence li[data-step][data-new]
//
// Every string from a run goes in as text (dom.js), never as HTML.

import { byId, clear, el, fill, svg } from "../lib/dom.js";
import { formatDelta, formatReward } from "../lib/format.js";

const COLUMNS = [
  ["status", "Status"],
  ["cpu_percent", "CPU %"],
  ["memory_percent", "Memory %"],
  ["error_rate", "Errors /s"],
  ["latency_p99_ms", "p99 ms"],
  ["replicas", "Replicas"],
  ["sla", "SLA"],
];

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function list(value) {
  return Array.isArray(value) ? value : [];
}

function number(value, digits) {
  if (typeof value !== "number" || !Number.isFinite(value)) return value === undefined || value === null ? "\u2014" : String(value);
  return digits === null ? String(value) : value.toFixed(digits);
}

/** The observation in force at step n (its own, or the last one before it) and the step it is from. */
function observationAt(run, n) {
  if (n < 0) return { observation: null, from: null };
  const env = run.steps[n].env;
  if (!env || env.shown_from === null || env.shown_from === undefined) return { observation: null, from: null };
  const owner = run.steps[env.shown_from].env;
  return { observation: owner && isObject(owner.observation) ? owner.observation : null, from: env.shown_from };
}

function serviceRows(observation) {
  return list(observation && observation.services).filter((row) => isObject(row) && typeof row.name === "string");
}

function cellValue(row, field, sla) {
  if (field === "replicas") return `${number(row.replicas_running, null)}/${number(row.replicas_desired, null)}`;
  if (field === "sla") return sla[row.name] === undefined ? "\u2014" : String(sla[row.name]);
  if (field === "status") return row.status === undefined ? "\u2014" : String(row.status);
  if (field === "error_rate") return number(row.error_rate, 3);
  if (field === "latency_p99_ms") return number(row.latency_p99_ms, 0);
  return number(row[field], 1);
}

function fieldChanged(changed, field) {
  if (field === "replicas") return changed.includes("replicas_running") || changed.includes("replicas_desired");
  return changed.includes(field);
}

// -- the action's result --------------------------------------------------------------------

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

function renderResult(box, run, n) {
  const step = run.steps[n];
  const env = step.env;
  clear(box);
  box.append(el("h3", null, "Environment"));
  if (!env) {
    box.append(el("p", { class: "muted" }, "This step carries no environment data."));
    return;
  }
  if (env.error) {
    const where = env.error.status === null || env.error.status === undefined ? "an error message" : `HTTP ${env.error.status}`;
    box.append(
      el(
        "p",
        { id: "episode-server-error", class: "episode-alert", role: "note" },
        el("strong", null, "The server failed this action "),
        `(${where}): `,
        el("code", null, String(env.error.message ?? "")),
        `. The environment did not advance and gave no reward; the state below is still step ${env.shown_from}\u2019s.`,
      ),
    );
  }
  const transport = env.transport || {};
  if (transport.retried_after) {
    box.append(
      el("p", { id: "episode-retry", class: "muted small" }, `The first attempt lost its connection (${transport.retried_after}); it was retried on a new connection.`),
    );
  }
  if (n === 0 && step.source === "user") {
    box.append(el("p", { class: "muted" }, "The state after /reset, before any action."));
  } else if (env.observation) {
    const observation = env.observation;
    const result = observation.last_action_result;
    box.append(resultField("episode-result-text", "Result", result === null || result === undefined ? "(none)" : String(result), env.stale && env.stale.last_action_result, "last_action_result"));
    const error = observation.last_action_error;
    if (error !== null && error !== undefined) {
      box.append(resultField("episode-error-text", "Error", String(error), env.stale && env.stale.last_action_error, "last_action_error"));
    }
  }
  const penalties = list(env.penalties);
  if (penalties.length) {
    box.append(
      el("h4", null, "Penalties this step"),
      el("ul", { id: "episode-penalties", class: "chip-list" }, penalties.map((kind) => el("li", { class: "chip chip-penalty", dataset: { kind } }, kind))),
    );
  }
}

// -- score and incident status --------------------------------------------------------------

function lastDoneStep(run) {
  for (let n = 0; n < run.steps.length; n += 1) {
    if (run.steps[n].env && run.steps[n].env.done) return n;
  }
  return null;
}

function incidentState(run, n, end) {
  const env = run.steps[n].env || {};
  if (n === 0) return ["start", "Not started: the state after /reset."];
  if (env.done) {
    if (env.resolution === "incident_resolved") return ["resolved", `Resolved at this step (done, info.resolution = \u201c${env.resolution}\u201d).`];
    return ["ended", `The episode ended at this step without resolution (done, info = \u201c${env.resolution ?? "none"}\u201d).`];
  }
  if (end !== null && end < n) return ["ended", `The episode ended at step ${end}; this step came after it.`];
  if (end !== null) return ["ongoing", `Ongoing; the episode ends at step ${end} (${run.steps[end].env.resolution ?? "done"}).`];
  return ["stopped", "Ongoing; the recording stopped before the environment said done."];
}

function degradedAfterEnd(observation) {
  const unhealthy = serviceRows(observation).some((row) => row.status && row.status !== "healthy");
  const alerts = list(observation && observation.active_alerts).length > 0;
  return unhealthy || alerts;
}

function partRow(part, label, value, sign) {
  const text = typeof value === "number" ? `${value === 0 ? "" : sign}${value.toFixed(4)}` : "\u2014";
  return el("tr", { dataset: { part } }, el("th", { scope: "row" }, label), el("td", { class: "num" }, text));
}

function renderFinal(box, run) {
  const final = run.final || {};
  const episode = final.episode;
  clear(box);
  box.append(el("h3", null, "Final score"));
  if (!isObject(episode) || !isObject(episode.parts)) {
    box.append(
      el("p", null, el("strong", { id: "episode-final-score", class: "final-score" }, formatReward(final.reward))),
      el("p", { class: "muted" }, "No final /state was recorded: the score is the run's final reward, without its parts."),
    );
    return;
  }
  const parts = episode.parts;
  const overlap = typeof parts.best_diagnosis_overlap === "number" ? ` (overlap ${parts.best_diagnosis_overlap})` : "";
  box.append(
    el(
      "p",
      null,
      el("strong", { id: "episode-final-score", class: "final-score" }, formatReward(parts.reported_score)),
      el("span", { class: "muted" }, ` reported by the server (/state info.current_score); ${episode.resolved ? "resolved" : "not resolved"}, ${parts.env_steps} of ${parts.max_steps ?? "?"} steps`),
    ),
    el(
      "table",
      { id: "episode-parts", class: "parts-table" },
      el(
        "tbody",
        null,
        partRow("total_reward", "Total reward (running, clamped to [0, 1])", parts.total_reward, ""),
        partRow("efficiency_bonus", "Efficiency bonus (resolved fast)", parts.efficiency_bonus, "+"),
        partRow("diagnosis_bonus", `Diagnosis bonus${overlap}`, parts.diagnosis_bonus, "+"),
        partRow("noop_penalty", `Noop penalty (${parts.noops} noops, 3 free)`, parts.noop_penalty, "\u2212"),
        partRow("repeat_restart_penalty", "Repeated restart penalty", parts.repeat_restart_penalty, "\u2212"),
        partRow("unclamped", "Sum", parts.unclamped, ""),
        partRow("derived_score", `Clamped to [${list(parts.clamp).join(", ")}]`, parts.derived_score, ""),
      ),
    ),
  );
  if (!parts.parts_match) {
    box.append(el("p", { class: "episode-alert", role: "note" }, "These parts, derived from /state by ARIA\u2019s published rules, do not add up to the server\u2019s score; the server\u2019s score is the one shown."));
  }
  const unlocked = list(episode.rewards_unlocked);
  box.append(
    el("h4", null, "Rewards unlocked"),
    unlocked.length
      ? el("ul", { id: "episode-unlocked", class: "chip-list" }, unlocked.map((name) => el("li", { class: "chip" }, String(name))))
      : el("p", { id: "episode-unlocked", class: "muted" }, "None."),
  );
  const truth = episode.ground_truth || {};
  box.append(
    el("h4", null, "Ground truth (from /state)"),
    el(
      "dl",
      { id: "episode-ground-truth", class: "truth" },
      el("dt", null, "Root cause"),
      el("dd", null, el("code", null, String(truth.root_cause ?? "\u2014"))),
      el("dt", null, "Fix"),
      el("dd", null, el("code", null, String(truth.fix ?? "\u2014"))),
    ),
  );
}

function renderStepScore(box, run, n, end) {
  const step = run.steps[n];
  const [state, text] = incidentState(run, n, end);
  const { observation } = observationAt(run, n);
  clear(box);
  box.append(
    el("h3", null, "This step"),
    el(
      "dl",
      { class: "score-now" },
      el("div", null, el("dt", null, "Reward"), el("dd", { id: "episode-step-reward", dataset: { trend: step.reward > 0 ? "up" : step.reward < 0 ? "down" : "flat" } }, formatDelta(step.reward))),
      el("div", null, el("dt", null, "Running total"), el("dd", { id: "episode-running-total" }, formatReward(step.total))),
    ),
    el("p", { id: "episode-incident", class: "incident", dataset: { state } }, text),
  );
  if ((state === "resolved" || state === "ended") && degradedAfterEnd(observation)) {
    box.append(el("p", { class: "muted small" }, "Services and alerts below may still look degraded: ARIA leaves them so after the end in some tasks. The end of the incident is taken from done / info, not from them."));
  }
}

// -- the board: services, map, alerts, logs, evidence ----------------------------------------

function renderServices(target, observation, previous, env) {
  clear(target);
  const rows = serviceRows(observation);
  if (!rows.length) {
    target.append(el("p", { class: "muted" }, "No services in this observation."));
    return;
  }
  const sla = isObject(observation.sla_status) ? observation.sla_status : {};
  const previousRows = new Map(serviceRows(previous).map((row) => [row.name, row]));
  const previousSla = previous && isObject(previous.sla_status) ? previous.sla_status : {};
  const changedBy = env && isObject(env.changed) && env.shown_from !== null ? env.changed : {};
  const fresh = env && env.observation ? env : null;
  const body = el("tbody");
  for (const row of rows) {
    const changed = fresh ? list(changedBy[row.name]) : [];
    const actedOn = env && env.acted_on === row.name;
    const cells = COLUMNS.map(([field]) => {
      const was = previousRows.get(row.name);
      const isChanged = fieldChanged(changed, field);
      return el(
        "td",
        {
          class: [field === "status" || field === "sla" ? null : "num", isChanged ? "changed" : null, field === "status" ? `status status-${row.status}` : null, field === "sla" ? `sla sla-${sla[row.name]}` : null],
          dataset: { field, changed: isChanged ? "1" : "0" },
          title: isChanged && was ? `was ${cellValue(was, field, previousSla)}` : null,
        },
        cellValue(row, field, sla),
      );
    });
    body.append(
      el(
        "tr",
        { class: [actedOn ? "acted-on" : null], dataset: { service: row.name, actedOn: actedOn ? "1" : "0", new: fresh && list(env.new_services).includes(row.name) ? "1" : "0" } },
        el("th", { scope: "row" }, row.name, actedOn ? el("span", { class: "acted-mark" }, "acted on") : null),
        cells,
      ),
    );
  }
  target.append(
    el(
      "table",
      { id: "episode-services", class: "data-table services-table" },
      el("thead", null, el("tr", null, el("th", { scope: "col" }, "Service"), COLUMNS.map(([field, label]) => el("th", { scope: "col", class: field === "status" || field === "sla" ? null : "num" }, label)))),
      body,
    ),
    el("p", { class: "muted small" }, "Highlighted cells changed since the previous step (hover for the old value)."),
  );
}

function mapLayout(dependencies) {
  const calls = new Map();
  const order = [];
  const add = (name) => {
    if (!calls.has(name)) {
      calls.set(name, []);
      order.push(name);
    }
  };
  for (const entry of dependencies) {
    add(entry.service);
    for (const callee of list(entry.calls)) {
      if (typeof callee !== "string") continue;
      add(callee);
      if (!calls.get(entry.service).includes(callee)) calls.get(entry.service).push(callee);
    }
  }
  const depth = new Map(order.map((name) => [name, 0]));
  for (let round = 0; round < order.length; round += 1) {
    let moved = false;
    for (const [caller, callees] of calls) {
      for (const callee of callees) {
        if (depth.get(callee) < depth.get(caller) + 1 && depth.get(caller) + 1 < order.length) {
          depth.set(callee, depth.get(caller) + 1);
          moved = true;
        }
      }
    }
    if (!moved) break;
  }
  const columns = [];
  for (const name of order) {
    const d = depth.get(name);
    (columns[d] ||= []).push(name);
  }
  return { calls, columns: columns.filter(Boolean) };
}

const NODE_W = 168;
const NODE_H = 34;
const GAP_X = 70;
const GAP_Y = 16;

function renderMap(target, observation, env) {
  clear(target);
  const dependencies = list(observation && observation.service_dependencies).filter((entry) => isObject(entry) && typeof entry.service === "string");
  if (!dependencies.length) {
    target.append(el("p", { id: "episode-map-empty", class: "muted" }, "The environment sent no dependency map in this observation."));
    return;
  }
  const status = new Map(serviceRows(observation).map((row) => [row.name, String(row.status ?? "unknown")]));
  const { calls, columns } = mapLayout(dependencies);
  const tallest = Math.max(...columns.map((column) => column.length));
  const width = columns.length * NODE_W + (columns.length - 1) * GAP_X + 20;
  const height = tallest * NODE_H + (tallest - 1) * GAP_Y + 36;
  const position = new Map();
  columns.forEach((column, c) => {
    const offset = ((tallest - column.length) * (NODE_H + GAP_Y)) / 2;
    column.forEach((name, r) => position.set(name, { x: 10 + c * (NODE_W + GAP_X), y: 26 + offset + r * (NODE_H + GAP_Y) }));
  });
  const root = svg("svg", {
    id: "episode-map-svg",
    viewBox: `0 0 ${width} ${height}`,
    role: "img",
    "aria-label": `Service dependency map: ${position.size} services; arrows point from caller to callee${env && env.acted_on ? `; acted on: ${env.acted_on}` : ""}`,
  });
  root.append(svg("defs", null, svg("marker", { id: "map-arrow", viewBox: "0 0 10 10", refX: "9", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, svg("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "map-arrowhead" }))));
  for (const [caller, callees] of calls) {
    const from = position.get(caller);
    for (const callee of callees) {
      const to = position.get(callee);
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x;
      const y2 = to.y + NODE_H / 2;
      const bend = Math.max(24, (x2 - x1) / 2);
      const d = x2 > x1 ? `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}` : `M ${from.x + NODE_W / 2} ${from.y + NODE_H} Q ${(from.x + to.x) / 2 + NODE_W} ${(y1 + y2) / 2}, ${to.x + NODE_W / 2} ${to.y}`;
      root.append(svg("path", { class: "map-edge", d, "marker-end": "url(#map-arrow)", dataset: { from: caller, to: callee } }));
    }
  }
  for (const [name, { x, y }] of position) {
    const actedOn = env && env.acted_on === name;
    const state = status.get(name) || "unknown";
    const label = name.length > 22 ? `${name.slice(0, 21)}\u2026` : name;
    const node = svg(
      "g",
      { class: ["map-node", `status-${state}`, actedOn ? "acted-on" : null], dataset: { service: name, status: state, actedOn: actedOn ? "1" : "0" } },
      svg("title", null, `${name}: ${state}${actedOn ? " (acted on at this step)" : ""}`),
      svg("rect", { x, y, width: NODE_W, height: NODE_H, rx: 7 }),
      svg("text", { x: x + NODE_W / 2, y: y + NODE_H / 2 + 4, "text-anchor": "middle" }, label),
    );
    if (actedOn) node.append(svg("text", { class: "map-acted", x: x + NODE_W / 2, y: y - 6, "text-anchor": "middle" }, "\u25bc acted on"));
    root.append(node);
  }
  const missing = serviceRows(observation).map((row) => row.name).filter((name) => !position.has(name));
  target.append(root, el("p", { class: "muted small" }, "Arrows point from caller to callee; colour is the service\u2019s status.", missing.length ? ` Not in the map: ${missing.join(", ")}.` : ""));
}

function renderAlerts(target, observation, env) {
  clear(target);
  const alerts = list(observation && observation.active_alerts).filter(isObject);
  const fresh = env && env.observation ? env : null;
  const isNew = new Set(fresh ? list(env.alerts_new) : []);
  if (!alerts.length) target.append(el("p", { class: "muted" }, "No active alerts."));
  else {
    target.append(
      el(
        "ul",
        { id: "episode-alerts", class: "alert-list" },
        alerts.map((alert) =>
          el(
            "li",
            { class: ["alert", `severity-${alert.severity}`], dataset: { alertId: String(alert.id), new: isNew.has(String(alert.id)) ? "1" : "0" } },
            el("span", { class: "badge badge-severity" }, String(alert.severity ?? "?")),
            " ",
            el("code", null, String(alert.id ?? "")),
            " ",
            el("strong", null, String(alert.service ?? "")),
            isNew.has(String(alert.id)) ? el("span", { class: "changed-mark" }, "new") : null,
            alert.acknowledged ? el("span", { class: "badge badge-muted" }, "acknowledged") : null,
            el("div", { class: "alert-message" }, String(alert.message ?? "")),
          ),
        ),
      ),
    );
  }
  const cleared = fresh ? list(env.alerts_cleared) : [];
  if (cleared.length) target.append(el("p", { id: "episode-alerts-cleared", class: "muted small" }, `Cleared since the previous step: ${cleared.join(", ")}.`));
}

function renderLogs(target, observation) {
  clear(target);
  const logs = observation && isObject(observation.recent_logs) ? observation.recent_logs : {};
  const names = Object.keys(logs);
  if (!names.length) {
    target.append(el("p", { class: "muted" }, "No recent logs in this observation."));
    return;
  }
  for (const name of names) {
    target.append(el("div", { class: "log-service", dataset: { service: name } }, el("h4", null, name), el("pre", { class: "text-block log-lines" }, list(logs[name]).map(String).join("\n"))));
  }
}

function renderEvidence(target, observation, env) {
  clear(target);
  const evidence = list(observation && observation.evidence_log).filter(isObject);
  if (!evidence.length) {
    target.append(el("p", { class: "muted" }, "Empty: reads (logs, metrics, runbooks, searches) add entries here."));
    return;
  }
  const fresh = env && env.observation ? env.evidence_new || 0 : 0;
  target.append(
    el(
      "ol",
      { id: "episode-evidence", class: "evidence-list" },
      evidence.map((entry, index) => {
        const isNew = index >= evidence.length - fresh;
        return el(
          "li",
          { dataset: { step: String(entry.step ?? ""), new: isNew ? "1" : "0" } },
          el("span", { class: "muted" }, `step ${entry.step ?? "?"} \u00b7 `),
          el("code", null, String(entry.source ?? "")),
          isNew ? el("span", { class: "changed-mark" }, "new") : null,
          el("div", null, String(entry.summary ?? "")),
          entry.raw ? el("details", null, el("summary", null, "Raw"), el("pre", { class: "text-block" }, String(entry.raw))) : null,
        );
      }),
    ),
  );
}

function panel(id, title) {
  const body = el("div", { id: `${id}-body` });
  return [el("section", { class: "panel", id, "aria-labelledby": `${id}-heading` }, el("h2", { id: `${id}-heading` }, title), body), body];
}

/**
 * Build the episode parts of the run view for `run` (null unless run.kind is "episode").
 * Returns update(n), which shows step n.
 */
export function mountEpisodeView(run) {
  if (run.kind !== "episode") return null;
  const view = byId("run-view");
  view.classList.add("episode-mode");
  const result = el("div", { id: "episode-result", class: "block" });
  byId("step-detail").insertBefore(result, byId("step-output-box"));
  const stepScore = el("div", { id: "episode-step-score" });
  const finalScore = el("div", { id: "episode-final" });
  const aside = el("aside", { id: "episode-score", class: "panel episode-score", "aria-label": "Reward and score" }, stepScore, finalScore);
  const checksPanel = byId("checks-panel");
  const side = el("div", { id: "episode-side", class: "episode-side" }, aside);
  checksPanel.replaceWith(side);
  side.append(checksPanel);
  const note = el("p", { id: "episode-observation-note", class: "episode-alert", hidden: true });
  const [servicesPanel, services] = panel("episode-services-panel", "Services");
  const [mapPanel, map] = panel("episode-map", "Dependency map");
  const [alertsPanel, alerts] = panel("episode-alerts-panel", "Active alerts");
  const [logsPanel, logs] = panel("episode-logs", "Recent logs");
  const [evidencePanel, evidence] = panel("episode-evidence-panel", "Evidence log");
  const board = el(
    "section",
    { id: "episode-board", "aria-label": "Environment state" },
    note,
    el("div", { class: "episode-grid" }, servicesPanel, mapPanel),
    el("div", { class: "episode-grid" }, alertsPanel, evidencePanel),
    logsPanel,
  );
  const columns = view.querySelector(".run-columns");
  columns.parentNode.insertBefore(board, columns.nextSibling);
  renderFinal(finalScore, run);
  const end = lastDoneStep(run);

  return function update(n) {
    const env = run.steps[n].env;
    const { observation, from } = observationAt(run, n);
    const { observation: previous } = observationAt(run, n - 1);
    renderResult(result, run, n);
    renderStepScore(stepScore, run, n, end);
    note.hidden = !(env && !env.observation && from !== null);
    fill(note, note.hidden ? "" : `No new observation at this step; shown: the observation after step ${from}.`);
    renderServices(services, observation, previous, env);
    renderMap(map, observation, env);
    renderAlerts(alerts, observation, env);
    renderLogs(logs, observation);
    renderEvidence(evidence, observation, env);
  };
}
