// Reward and score of an episode run (the #episode-score aside, laid out in
// site/templates/_episode_score.html): this step's reward, the running total and the incident's
// state; the final score with its parts (run.final.episode, recorder/episodes/writer.py).
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el, fill } from "../lib/dom.js";
import { isObject, list, observationAt, serviceRows, showIf } from "../lib/episode-data.js";
import { formatDelta, formatReward } from "../lib/format.js";

/** The first step whose env says done, or null. */
export function lastDoneStep(run) {
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

/** Step n's reward, the running total and the incident's state; `end` is lastDoneStep(run). */
export function renderStepScore(run, n, end) {
  const step = run.steps[n];
  const [state, text] = incidentState(run, n, end);
  const { observation } = observationAt(run, n);
  const reward = byId("episode-step-reward");
  reward.dataset.trend = step.reward > 0 ? "up" : step.reward < 0 ? "down" : "flat";
  fill(reward, formatDelta(step.reward));
  fill(byId("episode-running-total"), formatReward(step.total));
  const incident = byId("episode-incident");
  incident.dataset.state = state;
  fill(incident, text);
  showIf(byId("episode-degraded"), (state === "resolved" || state === "ended") && degradedAfterEnd(observation));
}

function fillParts(parts) {
  for (const row of byId("episode-parts").querySelectorAll("tr[data-part]")) {
    const value = parts[row.dataset.part];
    const text = typeof value === "number" ? `${value === 0 ? "" : row.dataset.sign}${value.toFixed(4)}` : "\u2014";
    fill(row.querySelector("td"), text);
  }
  fill(byId("episode-parts-overlap"), typeof parts.best_diagnosis_overlap === "number" ? ` (overlap ${parts.best_diagnosis_overlap})` : "");
  fill(byId("episode-parts-noops"), String(parts.noops));
  fill(byId("episode-parts-clamp"), list(parts.clamp).join(", "));
  showIf(byId("episode-parts-mismatch"), !parts.parts_match);
}

function fillUnlocked(episode) {
  const unlocked = list(episode.rewards_unlocked);
  fill(byId("episode-unlocked"), unlocked.map((name) => el("li", { class: "chip" }, String(name))));
  showIf(byId("episode-unlocked"), unlocked.length > 0);
  showIf(byId("episode-unlocked-none"), unlocked.length === 0);
  const truth = episode.ground_truth || {};
  fill(byId("episode-root-cause"), String(truth.root_cause ?? "\u2014"));
  fill(byId("episode-fix"), String(truth.fix ?? "\u2014"));
}

/** The final score: the server's, with its parts when a final /state was recorded. */
export function renderFinal(run) {
  const final = run.final || {};
  const episode = final.episode;
  const withParts = isObject(episode) && isObject(episode.parts);
  showIf(byId("episode-final-no-parts"), !withParts);
  showIf(byId("episode-final-parts"), withParts);
  if (!withParts) {
    fill(byId("episode-final-score"), formatReward(final.reward));
    return;
  }
  const parts = episode.parts;
  fill(byId("episode-final-score"), formatReward(parts.reported_score));
  fill(
    byId("episode-final-source"),
    ` reported by the server (/state info.current_score); ${episode.resolved ? "resolved" : "not resolved"}, ${parts.env_steps} of ${parts.max_steps ?? "?"} steps`,
  );
  fillParts(parts);
  fillUnlocked(episode);
}
