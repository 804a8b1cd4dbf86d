// Action-episode view (runs of kind "episode", e.g. ARIA): what the environment showed at each step.
//
// The layout is in the run page's templates (site/templates/_episode_result.html,
// _episode_score.html, _episode_board.html, _episode_curve.html), hidden until an episode run is
// shown; these modules fill it. run.js calls mountEpisodeBoard(head) to draw the first step from
// the run's head file, then mountEpisodeView(run, show, drawnFromHead) once the whole run file is in
// (null for other kinds), and the returned update(n) on every step change. The data is the run file's
// steps[n].env (exporter/episodes.py) and run.final.episode (the final score and its parts,
// recorder/episodes/writer.py). An episode has no check catalog: the check panels, the check x
// step matrix and the generic (clamped) curve are hidden; the episode curve, ARIA's step numbers
// and the step strip's marks take their place.
//
// Stable ids and data attributes (tests rely on them):
//   #run-view.episode-mode          set while an episode is shown
//   #timeline button.step-dot[data-mark="penalty"|"failed"|"observer"|""][data-aria-step]
//   #run-meta div[data-field="difficulty"|"failure_mode"|"mode"]
//   #episode-result                 in #step-detail: the action's result
//     #episode-result-text[data-stale="1"|"0"], #episode-error-text[data-stale]   last_action_result / _error;
//     .stale-note says which step a stale value is left over from
//     #episode-server-error         shown when the server failed this action (no observation)
//     #episode-retry                shown when the request was retried on a new connection
//     #episode-penalties li[data-kind]
//   #episode-score                  aside (see episode-score.js)
//   #episode-curve                  the unclamped curve (see episode-curve.js)
//   #episode-agents                 the two lanes of a dual-agent run (see episode-agents.js)
//   #episode-board                  #episode-observation-note (observation from an earlier step),
//     #episode-services tr[data-service][data-acted-on][data-new] td[data-field][data-changed][title="was …"],
//     #episode-map-svg g.map-node[data-service][data-status][data-acted-on], path.map-edge[data-from][data-to],
//     #episode-alerts li[data-alert-id][data-new], #episode-alerts-cleared,
//     #episode-logs .log-service[data-service], #episode-evidence li[data-step][data-new],
//     #episode-runbooks-read li, #episode-clock (see episode-context.js)
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el } from "../lib/dom.js";
import { setHidden, setText } from "../lib/dom-update.js";
import { isObject, observationAt } from "../lib/episode-data.js";
import { drawAll, drawInReach, holdReach, releaseReach } from "../lib/in-reach.js";
import { renderAgents } from "./episode-agents.js";
import { renderContext } from "./episode-context.js";
import { renderEpisodeCurve, stepMark } from "./episode-curve.js";
import { feedView, renderAlerts, renderEvidence, renderLogs } from "./episode-feed.js";
import { renderMap } from "./episode-map.js";
import { renderResult } from "./episode-result.js";
import { episodeSummary, renderFinal, renderStepScore } from "./episode-score.js";
import { renderServices } from "./episode-services.js";
import { EPISODE_MARKUP } from "../lib/episode-markup.js";

/** The alerting runs' panels, the check permalinks and the templates of step blocks only they have (lib/dom.js blockFor). */
const ALERTING_PARTS = ["checks-panel", "matrix-panel", "check-inspector", "reward-panel", "check-permalink", "cause-permalink",
  "step-diff-box-template", "step-orphans-box-template", "step-config-box-template", "step-atif-box-template", "subagent-dialog-template"];
/** The board's panels, each drawn once it is in reach (lib/in-reach.js; the runbooks' draws the clock beside it too). */
const BOARD_PANELS = ["episode-services-panel", "episode-map", "episode-alerts-panel", "episode-evidence-panel",
  "episode-runbooks-panel", "episode-logs"];

/** Mark the step strip: penalised and failed actions, the observer's findings, ARIA's step. */
function markStrip(run) {
  for (const button of byId("timeline").querySelectorAll("button.step-dot")) {
    const step = run.steps[Number(button.dataset.step)];
    const env = (step && step.env) || {};
    const mark = env.agent === "observer" ? "observer" : stepMark(step);
    button.dataset.mark = mark;
    button.dataset.ariaStep = typeof env.aria_step === "number" ? String(env.aria_step) : "";
    const said = mark === "failed" ? "failed action, not counted by ARIA" : mark === "penalty" ? "penalised"
      : mark === "observer" ? "observer finding" : "";
    const aria = typeof env.aria_step === "number" ? ` \u00b7 ARIA step ${env.aria_step}` : "";
    const title = `${button.getAttribute("title")}${aria}${said ? ` \u00b7 ${said}` : ""}`;
    button.setAttribute("title", title);
    button.setAttribute("aria-label", title);
  }
}

function metaItem(field, name, value) {
  return el("div", { dataset: { field } }, el("dt", null, name), el("dd", null, value));
}

function addMeta(run) {
  const episode = isObject(run.final && run.final.episode) ? run.final.episode : {};
  const meta = byId("run-meta");
  meta.append(metaItem("difficulty", "Difficulty", String(episode.difficulty ?? "\u2014")));
  if (isObject(episode.failure_mode)) meta.append(metaItem("failure_mode", "Failure mode", `${episode.failure_mode.mode}${episode.failure_mode.inferred ? " (inferred)" : ""}`));
  if (episode.mode === "dual") meta.append(metaItem("mode", "Agents", "observer + responder"));
}

/**
 * The element a markup tree describes (lib/episode-markup.js: [tag, attributes or null,
 * ...children], text as strings; a template's children go to its content), built with
 * document.createElement: the trees are the site's own partials, not run data, and no markup
 * parser is involved.
 * @param {Array<any> | string} node
 * @returns {Node}
 */
function buildMarkup(node) {
  if (typeof node === "string") return document.createTextNode(node);
  const [tag, attributes, ...children] = node;
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes || {})) element.setAttribute(name, String(value));
  const target = element instanceof HTMLTemplateElement ? element.content : element;
  for (const child of children) target.append(buildMarkup(child));
  return element;
}

/** Put the score aside and the board in place of their empty roots in run.html (once). */
function placeMarkup() {
  for (const [id, node] of Object.entries(EPISODE_MARKUP)) {
    const root = byId(id);
    if (!root.hasChildNodes()) root.replaceWith(buildMarkup(node));
  }
}

/**
 * Show the episode parts of the run view, take the alerting ones out of the page (an episode has
 * no check catalog: the page holds no hidden panels), fill the final score and the meta.
 */
function showParts(source, summary) {
  placeMarkup();
  byId("run-view").classList.add("episode-mode");
  for (const id of ["episode-result", "episode-score", "episode-board", "episode-curve"]) byId(id).hidden = false;
  for (const id of ALERTING_PARTS) document.getElementById(id)?.remove();
  window.addEventListener("beforeprint", () => drawAll(BOARD_PANELS.map(byId)));
  renderFinal(source, summary.lastTotal);
  addMeta(source);
}

/**
 * update(n) of the board: step n's result, score and the observation in force, from `source`
 * (the whole run, or its head for a step among the head's). The board's nodes stay from step
 * to step; each part writes only what changed (lib/dom-update.js), so a fresh draw of step n
 * and a walk to it show the same board.
 */
function boardUpdate(source, summary) {
  const note = byId("episode-observation-note");
  let first = true;
  return function update(n) {
    const env = source.steps[n].env;
    const { observation, from } = observationAt(source, n);
    const { observation: previous } = observationAt(source, n - 1);
    renderResult(source, n);
    renderStepScore(source, n, summary);
    setHidden(note, !(env && !env.observation && from !== null));
    setText(note, note.hidden ? "" : `No new observation at this step; shown: the observation after step ${from}.`);
    // the panels out of reach draw when they come in reach (the first step reads where they are)
    const checkNow = first;
    first = false;
    const inReach = (id, draw) => drawInReach(byId(id), draw, checkNow);
    inReach("episode-services-panel", () => renderServices(observation, previous, env));
    inReach("episode-map", () => renderMap(observation, env));
    const feed = feedView(source, n, observation, env);
    inReach("episode-alerts-panel", () => renderAlerts(feed.observation, feed.env));
    inReach("episode-logs", () => renderLogs(feed.observation));
    inReach("episode-evidence-panel", () => renderEvidence(feed.observation, feed.env));
    inReach("episode-runbooks-panel", () => renderContext(source, n, observation));
  };
}

/**
 * The board of an episode run drawn from its head file (docs/formats.md "Site data", run
 * heads: the first steps and the episode block): returns update(n) for a step among the head's
 * steps, or null when `head` is not an episode run's head with its episode block (then the view
 * waits for the whole run file). The strip's marks, the curve and a dual run's lanes come with
 * mountEpisodeView(run, onSelect, true).
 */
export function mountEpisodeBoard(head) {
  if (head.kind !== "episode" || !isObject(head.episode)) return null;
  holdReach(); // the strip and the curve come above the board with the whole run (mountEpisodeView)
  const summary = episodeSummary(head);
  showParts(head, summary);
  return boardUpdate(head, summary);
}

/**
 * Show the episode parts of the run view for `run` (null unless run.kind is "episode"); `onSelect(n)`
 * opens step n. `drawnFromHead`: mountEpisodeBoard drew the parts already (the board's nodes are
 * kept). Returns update(n), which shows step n.
 */
export function mountEpisodeView(run, onSelect = () => {}, drawnFromHead = false) {
  if (run.kind !== "episode") return null;
  const summary = episodeSummary(run);
  if (!drawnFromHead) showParts(run, summary);
  markStrip(run);
  const curve = renderEpisodeCurve(run, onSelect);
  const lanes = renderAgents(run, onSelect);
  const board = boardUpdate(run, summary);
  releaseReach();
  return function update(n) {
    board(n);
    curve(n);
    lanes(n);
  };
}
