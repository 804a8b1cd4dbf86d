// Reward and score of an episode run (the #episode-score aside, laid out in
// site/templates/_episode_score.html): this step's reward split into ARIA's components, ARIA's
// own step number, the running total and the incident's state; the final score beside the last
// running total with the grader's parts, each citing ARIA's code (run.final.episode,
// recorder/episodes/writer.py and score.py); each agent's rewards in a dual-agent run; the
// environment's events; the ground truth behind a spoiler until the last step.
//
// Stable ids: #episode-aria-step[data-counted="1"|"0"], #episode-components tr[data-part],
// #episode-final-total, #episode-final-score, #episode-final-parts (a fold: details[data-drawn]),
// #episode-parts tbody tr[data-part][data-source] (in the page once the fold is opened),
// #episode-parts-mismatch, #episode-parts-match, #episode-agents-rewards, #episode-events-list li,
// #episode-truth-box[open] (open from the last step on), #episode-ground-truth (once it is opened).
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { blockFor, byId, el, fill } from "../lib/dom.js";
import { isObject, list, observationAt, serviceRows, showIf } from "../lib/episode-data.js";
import { formatDelta, formatReward } from "../lib/format.js";
import { refillOnChange, setAttr, setHidden, setText } from "../lib/dom-update.js";
import { drawWhenOpen, openFold, unfoldForPrint } from "../lib/in-reach.js";

/** The first step whose env says done, or null. */
export function lastDoneStep(run) {
  for (let n = 0; n < run.steps.length; n += 1) {
    if (run.steps[n].env && run.steps[n].env.done) return n;
  }
  return null;
}

/**
 * What the score aside needs to know of every step: {count (steps), lastTotal (the last step's
 * total), doneStep (lastDoneStep), resolution (that step's env.resolution)}. From a run head
 * (it has step_count) these come from its episode block and last_total (exporter/episodes.py
 * episode_head, the same rule), else from the whole run's steps; truthSource says where the
 * ground truth comes from (a dual-agent run's is restated from ARIA's task code, not /state).
 */
export function episodeSummary(source) {
  const episode = isObject(source.final) && isObject(source.final.episode) ? source.final.episode : {};
  const truthSource = episode.mode === "dual" ? "restated from ARIA\u2019s task code for this seed" : null;
  if (Number.isInteger(source.step_count)) {
    const block = isObject(source.episode) ? source.episode : {};
    return { count: source.step_count, lastTotal: source.last_total, doneStep: block.done_step ?? null, resolution: block.resolution ?? null, truthSource };
  }
  const done = lastDoneStep(source);
  return { count: source.steps.length, lastTotal: source.steps.at(-1).total, doneStep: done, resolution: done === null ? null : source.steps[done].env.resolution ?? null, truthSource };
}

function incidentState(step, n, summary) {
  const env = step.env || {};
  const end = summary.doneStep;
  if (n === 0) return ["start", "Not started: the state after /reset."];
  if (env.done) {
    if (env.resolution === "incident_resolved") return ["resolved", `Resolved at this step (done, info.resolution = \u201c${env.resolution}\u201d).`];
    return ["ended", `The episode ended at this step without resolution (done, info = \u201c${env.resolution ?? "none"}\u201d).`];
  }
  if (end !== null && end < n) return ["ended", `The episode ended at step ${end}; this step came after it (ARIA still applies and scores it).`];
  if (end !== null) return ["ongoing", `Ongoing; the episode ends at step ${end} (${summary.resolution ?? "done"}).`];
  return ["stopped", "Ongoing; the recording stopped before the environment said done."];
}

function degradedAfterEnd(observation) {
  const unhealthy = serviceRows(observation).some((row) => row.status && row.status !== "healthy");
  const alerts = list(observation && observation.active_alerts).length > 0;
  return unhealthy || alerts;
}

function amount(value) {
  return typeof value === "number" ? `${value > 0 ? "+" : value < 0 ? "\u2212" : ""}${Math.abs(value).toFixed(4)}` : "\u2014";
}

function ariaStep(step) {
  const env = step.env || {};
  const line = byId("episode-aria-step");
  const counted = typeof env.aria_step === "number";
  line.dataset.counted = counted ? "1" : "0";
  if (step.n === 0) fill(line, "ARIA step 0: the state after /reset.");
  else if (env.agent === "observer") fill(line, "The observer\u2019s finding: not a step of ARIA\u2019s episode.");
  else if (counted) fill(line, `ARIA step ${env.aria_step} (ARIA counts only the actions it answered).`);
  else if (env.error) fill(line, "Not counted by ARIA: the server failed this action, its step counter did not move.");
  else fill(line, "");
}

function renderComponents(env) {
  const components = list(env && env.components);
  setHidden(byId("episode-components-box"), !components.length);
  const body = byId("episode-components").tBodies[0];
  refillOnChange(body, JSON.stringify(components), () => fill(body, components.map((c) => el(
    "tr",
    { class: c.amount < 0 ? "part-penalty" : null, dataset: { part: String(c.name), kind: String(c.kind) } },
    el("th", { scope: "row" }, String(c.name), c.inferred ? " *" : ""),
    el("td", { class: "num" }, amount(c.amount)),
    el("td", null, el("code", null, String(c.source ?? ""))),
  ))));
  setHidden(byId("episode-components-inferred"), !components.some((c) => c.inferred));
}

/**
 * Step n's reward and its parts, the running total and the incident's state; `source` is the
 * whole run or its head (step n among its steps), `summary` is episodeSummary(source).
 */
export function renderStepScore(source, n, summary) {
  const step = source.steps[n];
  const [state, text] = incidentState(step, n, summary);
  const { observation } = observationAt(source, n);
  const reward = byId("episode-step-reward");
  setAttr(reward, "data-trend", step.reward > 0 ? "up" : step.reward < 0 ? "down" : "flat");
  setText(reward, formatDelta(step.reward));
  setText(byId("episode-running-total"), formatReward(step.total));
  ariaStep(step);
  renderComponents(step.env);
  const incident = byId("episode-incident");
  setAttr(incident, "data-state", state);
  setText(incident, text);
  setHidden(byId("episode-degraded"), !((state === "resolved" || state === "ended") && degradedAfterEnd(observation)));
  const truth = /** @type {HTMLDetailsElement} */ (byId("episode-truth-box"));
  const last = n === summary.count - 1;
  if (truth.open !== last) openFold(truth, last);
  const from = summary.truthSource || "from /state";
  setText(byId("episode-truth-summary"), last ? `Ground truth (${from})` : `Ground truth (${from}): a spoiler, shown from the last step on`);
}

/** The grader's parts table (in its <template> until the fold is opened). */
function fillPartsTable(parts) {
  const table = /** @type {HTMLTableElement} */ (blockFor("episode-parts", true));
  fill(table.tBodies[0], list(parts.parts).map((part) => el(
    "tr",
    { dataset: { part: String(part.name), source: String(part.source ?? "") } },
    el("th", { scope: "row" }, String(part.name), el("div", { class: "muted small" }, String(part.detail ?? ""))),
    el("td", { class: "num" }, part.name === "running total" ? formatReward(part.amount) : amount(part.amount)),
    el("td", null, el("code", null, String(part.source ?? ""))),
  )));
  fill(table.tFoot.querySelector('tr[data-part="unclamped"] td'), formatReward(parts.unclamped));
  fill(table.tFoot.querySelector('tr[data-part="derived_score"] td'), formatReward(parts.derived_score));
  fill(byId("episode-parts-clamp"), list(parts.clamp).join(", "));
}

/**
 * The grader's parts: folded (the table built when opened or printed), open when they do not
 * add up to the server's score; whether they do is said beside the fold.
 */
function fillParts(parts) {
  const fold = /** @type {HTMLDetailsElement} */ (byId("episode-final-parts"));
  const count = list(parts.parts).length;
  fill(byId("episode-parts-summary"), `How ARIA\u2019s grader turns the running total into the score (${count} part${count === 1 ? "" : "s"})`);
  drawWhenOpen(fold, () => fillPartsTable(parts));
  unfoldForPrint(fold);
  const mismatch = typeof parts.mismatch === "number";
  showIf(byId("episode-parts-mismatch"), mismatch);
  fill(byId("episode-parts-mismatch"), mismatch ? `The parts give ${formatReward(parts.derived_score)}, the server reported ${formatReward(parts.reported_score)}: a mismatch of ${amount(parts.mismatch)}, listed here and not adjusted away.` : "");
  if (mismatch) openFold(fold);
  showIf(byId("episode-parts-match"), parts.parts_match === true);
}

function fillAgents(episode) {
  const agents = episode.agents;
  const box = blockFor("episode-agents-summary", isObject(agents));
  if (!box || !showIf(box, isObject(agents))) return;
  const observer = agents.observer || {};
  const responder = agents.responder || {};
  fill(byId("episode-agents-rewards"),
    el("dt", null, "Observer"), el("dd", null, `${observer.accepted ?? 0} of ${observer.findings ?? 0} findings accepted, ${formatReward(observer.reward)} (a flat 0.05 each; ARIA adds it to no total or score)`),
    el("dt", null, "Responder"), el("dd", null, `${responder.actions ?? 0} actions, rewards summing to ${formatReward(responder.reward)}; the running total and the score are its`));
}

function fillEvents(episode) {
  const events = list(episode.environment_events);
  const box = blockFor("episode-events", events.length > 0);
  if (!box || !showIf(box, events.length > 0)) return;
  fill(byId("episode-events-list"), events.map((event) => el("li", { dataset: { kind: String(event.kind) } },
    el("strong", null, String(event.kind)), ` before step ${event.before_step}: ${String(event.detail ?? "")}. The steps from there ran in that episode.`)));
}

function fillTruth(episode) {
  const unlocked = list(episode.rewards_unlocked);
  fill(byId("episode-unlocked"), unlocked.map((name) => el("li", { class: "chip" }, String(name))));
  showIf(byId("episode-unlocked"), unlocked.length > 0);
  showIf(byId("episode-unlocked-none"), unlocked.length === 0);
  const truth = episode.ground_truth || {};
  const mode = episode.failure_mode;
  // a spoiler: its text is in the page once the fold is opened
  drawWhenOpen(/** @type {HTMLDetailsElement} */ (byId("episode-truth-box")), () => {
    blockFor("episode-ground-truth", true);
    fill(byId("episode-root-cause"), String(truth.root_cause ?? "\u2014 (not reported)"));
    fill(byId("episode-fix"), String(truth.fix ?? "\u2014 (not reported)"));
    fill(byId("episode-failure-mode"), isObject(mode) ? `${mode.mode}${mode.inferred ? ` (inferred from ${mode.source})` : ""}` : "\u2014 (a curated task)");
  });
}

/** The final score beside the last running total (`lastTotal`), with the grader's parts when known. */
export function renderFinal(run, lastTotal) {
  const final = run.final || {};
  const episode = isObject(final.episode) ? final.episode : {};
  const withParts = isObject(episode.parts);
  fill(byId("episode-final-total"), formatReward(lastTotal));
  showIf(byId("episode-final-no-parts"), !withParts);
  showIf(byId("episode-final-parts"), withParts);
  const dual = episode.mode === "dual";
  fill(byId("episode-final-label"), dual ? "Score (derived)" : "Final score (server)");
  fill(byId("episode-final-score"), formatReward(final.reward));
  if (withParts) {
    const parts = episode.parts;
    fill(byId("episode-final-source"), dual
      ? `Derived by the grader\u2019s rules from the responder\u2019s steps: ARIA\u2019s multi-agent state reports no total, score or ground truth, ${isObject(episode.ground_truth) ? "so the diagnosis is compared with the ground truth restated from ARIA\u2019s task code for this seed" : "so there is no diagnosis part"}. ${episode.resolved ? "Resolved" : "Not resolved"} in ${parts.env_steps} steps.`
      : `The server\u2019s /state info.current_score; ${episode.resolved ? "resolved" : "not resolved"} in ${parts.env_steps} steps (the grader\u2019s step table: ${parts.grader_max_steps}).`);
    fillParts(parts);
  }
  fillAgents(episode);
  fillEvents(episode);
  fillTruth(episode);
}
