// Action-episode view (runs of kind "episode", e.g. ARIA): what the environment showed at each step.
//
// The layout is in the run page's templates (site/templates/_episode_result.html,
// _episode_score.html, _episode_board.html), hidden until an episode run is shown; these modules
// fill it. run.js calls mountEpisodeView(run) once (null for other kinds) and the returned
// update(n) on every step change. The data is the run file's steps[n].env (exporter/episodes.py)
// and run.final.episode (the final score and its parts, recorder/episodes/writer.py).
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
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, fill } from "../lib/dom.js";
import { observationAt } from "../lib/episode-data.js";
import { renderAlerts, renderEvidence, renderLogs } from "./episode-feed.js";
import { renderMap } from "./episode-map.js";
import { renderResult } from "./episode-result.js";
import { lastDoneStep, renderFinal, renderStepScore } from "./episode-score.js";
import { renderServices } from "./episode-services.js";

/**
 * Show the episode parts of the run view for `run` (null unless run.kind is "episode").
 * Returns update(n), which shows step n.
 */
export function mountEpisodeView(run) {
  if (run.kind !== "episode") return null;
  byId("run-view").classList.add("episode-mode");
  for (const id of ["episode-result", "episode-score", "episode-board"]) byId(id).hidden = false;
  renderFinal(run);
  const end = lastDoneStep(run);
  const note = byId("episode-observation-note");

  return function update(n) {
    const env = run.steps[n].env;
    const { observation, from } = observationAt(run, n);
    const { observation: previous } = observationAt(run, n - 1);
    renderResult(run, n);
    renderStepScore(run, n, end);
    note.hidden = !(env && !env.observation && from !== null);
    fill(note, note.hidden ? "" : `No new observation at this step; shown: the observation after step ${from}.`);
    renderServices(observation, previous, env);
    renderMap(observation, env);
    renderAlerts(observation, env);
    renderLogs(observation);
    renderEvidence(observation, env);
  };
}
