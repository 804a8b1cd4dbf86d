// Run view: steps through one run, chosen by the URL (run.html?run=ID&step=N&check=ID&hunk=H&cause=1),
// or by its own page (runs/<ID>.html?step=N&..., exporter/run_page.py: its first step is written in
// the HTML, which the view draws over after the first frame, the same elements from the same data).
// Permalinks: &check= selects and scrolls to a check, &cause=1 highlights its cause, &hunk=H
// highlights hunk H of the step's diff (tr[data-hunk=H], .hunk-highlight) and scrolls to it.
//
// Stable ids and data attributes (tests and deep links rely on them):
//   #run-error         shown (role=alert) with a message when the run or its task cannot be loaded
//                      (either of the run's two files: its head or the whole run file; or its task file)
//   #run-view          the whole view, hidden until the data is loaded (on a run's own page it is
//                      shown from the start, data-loaded="page": its first step is in the HTML);
//                      data-loaded="head" while it is
//                      drawn from the run's head file alone (data/run-heads/<id>.json: the first steps,
//                      the task's title and instruction and the checks panel's first groups; no other
//                      checks, timeline, curve, matrix, search or step moves yet), "all" once the task
//                      file and the whole run file are in and every part is built (body[data-ready="1"])
//   #run-rest-status   (role=status) "Loading all N steps…" while only the head is in
//   #run-title, #run-meta, #instruction (task instruction as plain text)
//   #btn-first #btn-prev #btn-next #btn-last   move between steps (also Home/ArrowLeft/ArrowRight/End)
//   #step-index        the current step number n (0 = initial state); #step-count the last n
//   #step-reward       cumulative reward after the current step, 4 decimals ("0.2400")
//   #step-delta        the current step's own reward change ("+0.2400", "−0.0420", "±0.0000"; empty if not graded)
//   #timeline          one button.step-dot[data-step=n][data-trend=up|down|flat|none] per step; aria-current="step" on the current one
//   #reward-curve-svg  the SVG curve; #curve-marker[data-step=n] marks the current step
//   #step-detail       the step: #step-heading, #step-tool (tool name), #step-message,
//                      #step-arguments (JSON.stringify(arguments, null, 2)), #step-output (tool output text),
//                      #step-diff-box / #step-diff-path / #step-diff (table.diff-table, tr.diff-line[data-op=" "|"+"|"-"])
//   #episode-*         action episodes only: services, dependency map, alerts, logs, score (see episode.js)
//   #check-inspector   the selected check: state, scenario plot, reproduce panel (see inspector.js)
//   #matrix-panel      the check x step matrix (see matrix.js); a click opens that step with that check selected
//   #checks-panel      li.check[data-check-id][data-index][data-state="pass|fail|na"][data-changed="1"|"0"],
//                      failing checks show their detail in .check-detail, their cause in .check-cause
//                      (.cause-kind, .cause-text) and a.blame-link[data-step][data-hunk] to the step that
//                      broke it; #checks-summary "p/a pass"
//   #step-permalink, #check-permalink, #cause-permalink   links to the step, selected check, its cause
//   #copy-markdown     copies the run as Markdown (#copy-markdown-status says what happened)
//
// Every string from a run is inserted with textContent / text nodes (see dom.js), never as HTML.

import { byId, fill, el, showPageError, siteRoot } from "../lib/dom.js";
import { blameAt, causeAt, failureAt, headMismatch, loadRun, loadRunHead, loadTask, loadTaskInputs, runAlias, startRunDownload, startTaskDownload } from "../lib/data.js";
import { formatCount, formatDelta, formatReward } from "../lib/format.js";
import { renderChecks } from "../components/checks.js";
import { highlightHunk, renderStepDetail } from "../components/detail.js";
import { pageQuery } from "../lib/params.js";
import { needParts, parts } from "../lib/run-parts.js";

// Parts not needed to draw the first step load after it (lazy imports; the page's first bundle holds
// only the above, so fewer files stand between the navigation and the first step). The episode
// modules are above: an episode run's first step is its board, and importing them once its head was
// in left a frame (the page's first style and layout) between the head and the step. params.js
// too: the address is written from the first step move on (it already names the run and the step).
function laterModules() {
  return Promise.all([
    import("../components/timeline.js"),
    import("../components/curve.js"),
    import("../components/matrix.js"),
    import("../components/inspector.js"),
    import("../lib/nav.js"),
    import("../components/runsearch.js"),
    import("../lib/params.js"),
    import("../lib/live.js"),  // `alertforge view`'s updates: watched once the whole run is drawn
  ]).then((modules) => Object.assign({}, ...modules));
}

const noop = () => {};

/** The checks view of a run with no check catalog (an episode): nothing to draw or finish. */
const noChecks = Object.assign(() => {}, { finish: noop });
// source: the whole run once loaded, else its head ({..., step_count, last_total, task, steps: first
// steps}); task: the task file (data/tasks/<id>.json) once loaded, null while the view is drawn from
// the head (whose `task` holds the title, instruction and the first groups of the checks panel).
const state = { run: null, head: null, source: null, task: null, step: 0, check: null, views: null, hunk: null, cause: false, modules: null };

function showError(message) {
  showPageError("run", "Cannot show this run.", message);
}

function lastStep() {
  return state.run ? state.run.steps.length - 1 : state.head.step_count - 1;
}

function clampStep(value) {
  const n = Number.parseInt(value, 10);
  if (!Number.isFinite(n) || n < 0) return 0;
  return Math.min(n, lastStep());
}

let writeParams = null;

// A run's own page (runs/<id>.html) names its run in the body (data-run) and the step its HTML
// shows (data-prerendered); its addresses name the step and the rest, not the run.
const OWN_PAGE = document.body.dataset.run || null;
const PRERENDERED = document.body.dataset.prerendered ?? null;

function place(step, check, hunk, cause) {
  return { run: OWN_PAGE ? null : state.source.run_id, step, check, hunk: hunk ?? null, cause: cause ? 1 : null };
}

function permalink(params) {
  const query = pageQuery(Object.fromEntries(Object.entries(params).filter(([, v]) => v !== null && v !== "")));
  return `${OWN_PAGE ? `${encodeURIComponent(OWN_PAGE)}.html` : "run.html"}${query ? `?${query}` : ""}`;
}

function writeUrl() {
  if (writeParams) writeParams(place(state.step, state.check, state.hunk, state.cause));
}

// The blame links' addresses, by step, check and hunk (a step switch updates every failing check's
// link: building each address again was most of the checks panel's time on long runs).
const blameHrefs = new Map();

/** A failing check's cause and blame at the current step, for the checks panel and the inspector. */
function whyOf(checkId, index) {
  const source = state.source;
  const cause = causeAt(source, state.step, checkId);
  const blame = source === state.run ? blameAt(source, state.step, index, checkId) : null;
  if (!blame) return { cause, blame, href: "" };
  const key = `${blame.step}\u0000${blame.hunk}\u0000${checkId}`;
  let href = blameHrefs.get(key);
  if (href === undefined) blameHrefs.set(key, (href = permalink(place(blame.step, checkId, blame.hunk, false))));
  return { cause, blame, href };
}

/** The catalog index of check `checkId`, from the task file or (until it is in) the head; -1 if unknown. */
function checkIndex(checkId) {
  if (state.task) return state.task.checks.findIndex((c) => c.id === checkId);
  const check = state.head.task.checks.find((c) => c.id === checkId);
  return check ? check.index : -1;
}

function updatePermalinks() {
  byId("step-permalink").setAttribute("href", permalink(place(state.step, null, null, false)));
  const check = document.getElementById("check-permalink");
  const cause = document.getElementById("cause-permalink");
  if (!check || !cause) return; // a page without checks (an episode's) holds neither
  check.hidden = !state.check;
  if (state.check) check.setAttribute("href", permalink(place(state.step, state.check, null, false)));
  const index = checkIndex(state.check);
  const failing = index >= 0 && (state.source.steps[state.step].checks || "")[index] === "0";
  cause.hidden = !failing || !causeAt(state.source, state.step, state.check);
  if (!cause.hidden) cause.setAttribute("href", permalink(place(state.step, state.check, null, true)));
}

function highlightCause() {
  for (const node of document.querySelectorAll(".check-cause.highlight")) node.classList.remove("highlight");
  if (!state.cause || !state.check) return;
  const node = document.querySelector(`li.check[data-check-id="${CSS.escape(state.check)}"] .check-cause`);
  if (node) node.classList.add("highlight");
}

function show(n, keepHunk = false) {
  if (!keepHunk && clampStep(n) !== state.step) state.hunk = null;
  state.step = clampStep(n);
  const source = state.source;
  const step = source.steps[state.step];
  const last = lastStep();
  fill(byId("step-index"), String(state.step));
  fill(byId("step-reward"), formatReward(step.total));
  const delta = byId("step-delta");
  fill(delta, step.graded ? formatDelta(step.reward) : "not graded");
  delta.dataset.trend = step.graded ? (step.reward > 0 ? "up" : step.reward < 0 ? "down" : "flat") : "none";
  const moving = source === state.run; // step moves are wired with the whole run file
  byId("btn-first").disabled = !moving || state.step === 0;
  byId("btn-prev").disabled = !moving || state.step === 0;
  byId("btn-next").disabled = !moving || state.step === last;
  byId("btn-last").disabled = !moving || state.step === last;
  state.views.timeline(state.step);
  state.views.curve(state.step);
  state.views.checks(step, state.check, (checkId) => failureAt(source, state.step, checkId), whyOf);
  state.views.matrix(state.step, state.check);
  state.views.inspector(source, state.step, state.check);
  renderStepDetail(step, source.kind, (hunk) => permalink(place(state.step, state.check, hunk, false)));
  parts.renderModelTurn(step);
  parts.renderStepAtif(step, source);
  highlightHunk(state.hunk);
  highlightCause();
  updatePermalinks();
  if (state.views.episode) state.views.episode(state.step);
  writeUrl();
}

function selectCheck(checkId) {
  state.check = state.check === checkId ? null : checkId;
  state.cause = false;
  show(state.step, true);
}

/** Open the step that broke a check, its hunk highlighted (the checks panel's blame link). */
function openBlame(n, hunk, checkId) {
  state.check = checkId;
  state.hunk = hunk;
  state.cause = false;
  show(n, true);
  const row = document.querySelector("#step-diff tr.hunk-highlight");
  if (row) row.scrollIntoView({ block: "center" });
}

function selectCell(n, checkId) {
  state.check = checkId;
  show(n);
  const item = document.querySelector(`li.check[data-check-id="${CSS.escape(checkId)}"]`);
  if (item) item.scrollIntoView({ block: "nearest" });
}

/**
 * The header from the whole run or its head (the head has last_total for the last step's level);
 * task: the task file or the head's task (both have title and instruction).
 */
function renderHeader(run, task) {
  document.title = `${task.title} \u00b7 ${run.run_id} \u00b7 3amBench Replay`;
  fill(byId("crumb-run"), run.run_id);
  fill(byId("run-title"), task.title);
  const meta = byId("run-meta");
  const final = run.final || {};
  const lastTotal = run === state.head ? run.last_total : run.steps.at(-1).total;
  const items = [
    ["Run", run.run_id],
    ["Task", run.task_id],
    ["Kind", run.kind],
    ["Policy", run.policy ?? "\u2014"],
    ["Model", run.model ?? "\u2014"],
    ["Seed", run.seed ?? "\u2014"],
    ["Final reward", formatReward(typeof final.reward === "number" ? final.reward : lastTotal)],
  ];
  fill(meta, items.map(([name, value]) => el("div", null, el("dt", null, name), el("dd", null, String(value)))));
  const status = byId("run-status");
  const incomplete = run.status && run.status !== "complete";
  status.hidden = !incomplete;
  status.className = `run-status status-${run.status || "complete"}`;
  status.dataset.status = run.status || "complete";
  fill(status, !incomplete ? "" : run.status === "failed"
    ? `This run failed: ${run.error || "no reason was recorded"}. Its steps are the ones recorded before it stopped; it is left out of the means on the home page.`
    : "This run is incomplete: it was interrupted or is still being recorded (the same command resumes it). It is left out of the means on the home page.");
  meta.append(el("div", null, el("dt", null, "Solved"), el("dd", null, el("span", { class: ["badge", final.solved === true ? "badge-pass" : "badge-muted"] }, final.solved === true ? "solved" : "no"))));
  fill(byId("instruction"), task.instruction);
  parts.renderRunModel(run);
  byId("compare-link").setAttribute("href", `${siteRoot()}compare.html?${new URLSearchParams({ a: run.run_id }).toString()}`);
  fill(byId("step-count"), String((run === state.head ? run.step_count : run.steps.length) - 1));
}

function nextFrame() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

// Marks (bench/viewer.py reads them): first-step-rendered when the first step is in the DOM,
// first-step-painted after the next frame (style, layout and paint of it done).
let firstStepMarked = false;
let firstPaintMarked = false;
function markFirstStep() {
  // a run's own page: its HTML set the mark when the parser reached the end of the step
  if (performance.getEntriesByName("first-step-rendered").length) firstStepMarked = true;
  if (firstStepMarked) return;
  firstStepMarked = true;
  performance.mark("first-step-rendered");
}
function markFirstPaint() {
  if (!firstStepMarked || firstPaintMarked) return;
  firstPaintMarked = true;
  performance.mark("first-step-painted");
}

/**
 * Draw the requested step from the head file alone: header, step detail and the checks panel's
 * first groups (the head's task; the others are built when the task file and run file are in);
 * for an episode run also its board (`episodeBoard` true: components/episode.js's mountEpisodeBoard).
 */
function showFromHead(wanted, episodeBoard) {
  state.source = state.head;
  document.documentElement.classList.remove("prerender-stale");
  renderHeader(state.head, state.head.task);
  const status = byId("run-rest-status");
  fill(status, `Loading all ${formatCount(state.head.step_count)} steps\u2026`);
  status.hidden = false;
  byId("run-loading").hidden = true;
  // until the run search is wired (with the whole run), Enter in its box must not submit the form
  byId("run-search-form").addEventListener("submit", (event) => event.preventDefault());
  const view = byId("run-view");
  view.dataset.loaded = "head";
  view.hidden = false;
  state.views = {
    timeline: noop,
    curve: noop,
    checks: state.head.kind === "episode" ? noChecks : renderChecks(byId("checks-groups"), byId("checks-summary"), state.head.task, selectCheck, openBlame),
    matrix: noop,
    inspector: noop,
    episode: episodeBoard ? parts.mountEpisodeBoard(state.head) : null,
  };
  show(wanted, true);
  markFirstStep();
}

/** Build every part of the view from the whole run file (after the head's first paint, if any). */
async function showWhole(modules) {
  const { run, task } = state;
  state.source = run;
  document.documentElement.classList.remove("prerender-stale");
  writeParams = modules.writeParams;
  const drawnFromHead = state.views !== null;
  if (!drawnFromHead) renderHeader(run, task);
  parts.renderTrialPanel(run);
  byId("run-loading").hidden = true;
  const view = byId("run-view");
  view.hidden = false;
  const timed = (name, build) => {
    const value = build();
    performance.mark(`built-${name}`);
    return value;
  };
  // an episode has no check catalog: its page holds no checks panel, reward curve, matrix or inspector (episode.js)
  const episode = run.kind === "episode";
  const checks = drawnFromHead || episode ? state.views?.checks ?? noChecks
    : timed("checks", () => renderChecks(byId("checks-groups"), byId("checks-summary"), task, selectCheck, openBlame));
  checks.finish(task);
  state.views = {
    timeline: timed("timeline", () => modules.renderTimeline(byId("timeline"), run.steps, show)),
    curve: episode ? noop : timed("curve", () => modules.renderCurve(byId("reward-curve"), run.steps, show)),
    checks,
    matrix: noop,
    inspector: episode ? noop : timed("inspector", () => modules.createInspector(task, () => selectCheck(state.check), () => loadTaskInputs(run.task_id),
      whyOf, openBlame)),
    episode: timed("episode", () => parts.mountEpisodeView(run, show, drawnFromHead)),
  };
  byId("btn-first").addEventListener("click", () => show(0));
  byId("btn-prev").addEventListener("click", () => show(state.step - 1));
  byId("btn-next").addEventListener("click", () => show(state.step + 1));
  byId("btn-last").addEventListener("click", () => show(lastStep()));
  const focusSearch = modules.installRunSearch(run, () => state.step, show);
  modules.installNavigation({ step: () => state.step, last: lastStep, show }, focusSearch);
  byId("run-rest-status").hidden = true;
  show(state.step, true);
  byId("copy-markdown").addEventListener("click", () => import("../components/markdown.js").then((m) => m.copyRunMarkdown(run, task, byId("copy-markdown-status"))));
  performance.mark("built-views");
  markFirstStep();
  // The matrix (a canvas of every check at every step) comes after the step is painted.
  await nextFrame();
  markFirstPaint();
  if (!episode) state.views.matrix = timed("matrix", () => modules.renderMatrix(byId("matrix"), run.steps, task, selectCell));
  state.views.matrix(state.step, state.check);
  // &cause=1 scrolls to the check's cause, or to its row when it has none at this step (it passes)
  const row = state.check ? document.querySelector(`li.check[data-check-id="${CSS.escape(state.check)}"]`) : null;
  const target = state.hunk !== null ? document.querySelector("#step-diff tr.hunk-highlight")
    : row && state.cause ? row.querySelector(".check-cause") ?? row : row;
  if (target) target.scrollIntoView({ block: "center" });
  view.dataset.loaded = "all";
  document.body.dataset.ready = "1";
  state.modules = modules;
  modules.watchLive(refreshRun);
}

/**
 * `alertforge view` exported the site again and this run's file changed (it grew while being
 * recorded, or was imported again): redraw from the new file at the step being read.
 */
async function refreshRun(info) {
  if (!state.run || !Array.isArray(info.changed) || !info.changed.includes(state.run.run_id)) return;
  const run = await loadRun(state.run.run_id);
  await needParts(run);
  const modules = state.modules;
  state.run = run;
  state.source = run;
  renderHeader(run, state.task);
  parts.renderTrialPanel(run);
  state.views.timeline = modules.renderTimeline(byId("timeline"), run.steps, show);
  if (run.kind !== "episode") {
    state.views.curve = modules.renderCurve(byId("reward-curve"), run.steps, show);
    state.views.matrix = modules.renderMatrix(byId("matrix"), run.steps, state.task, selectCell);
  }
  state.views.episode = parts.mountEpisodeView(run, show, false);
  show(Math.min(state.step, lastStep()), true);
}

/**
 * The run's head into state.head, or (an export without heads) its whole file into state.run;
 * false when the id is an older one of another run, whose address this replaces (not loaded).
 */
async function loadFirst(runId, params) {
  state.head = await loadRunHead(runId);
  if (state.head) {
    performance.mark("head-loaded");
    return true;
  }
  state.run = await loadRun(runId, true);
  if (state.run === null) {
    const target = await runAlias(runId);
    if (target) {  // an id from before run ids carried their identity: open the same run
      params.set("run", target);
      location.replace(`${location.pathname}?${params.toString()}${location.hash}`);
      return false;
    }
    throw new Error(`Run file for \u201c${runId}\u201d could not be loaded: HTTP 404 (no such run in this site).`);
  }
  performance.mark("run-loaded");
  return true;
}

async function main() {
  const params = new URLSearchParams(location.search);
  const runId = OWN_PAGE || params.get("run");
  if (!runId) {
    showError("No run chosen: the address needs ?run=<run id>.");
    return;
  }
  // what the address names is painted before any data arrives (the page's first paint waits for
  // this script only: blocking="render")
  for (const [id, text] of [["crumb-run", runId], ["run-loading", `Loading run ${runId}${params.get("step") ? `, step ${params.get("step")}` : ""}\u2026`]]) {
    const node = document.getElementById(id);
    if (node) fill(node, text);
  }
  state.check = params.get("check");
  const hunk = Number.parseInt(params.get("hunk") ?? "", 10);
  state.hunk = Number.isFinite(hunk) && hunk >= 0 ? hunk : null;
  state.cause = params.get("cause") === "1";
  const wanted = params.get("step") ?? 0;
  let modules = null;
  try {
    if (!(await loadFirst(runId, params))) return;
    const head = state.head;
    // A step past the head's needs the whole file, and so does an episode head without its
    // episode block (the end of the incident; exported before it): both wait for it.
    const inHead = head && Math.min(Math.max(Number.parseInt(wanted, 10) || 0, 0), head.step_count - 1) < head.steps.length;
    const episodeHead = Boolean(head) && head.kind === "episode";
    const fromHead = inHead && (!episodeHead || Boolean(head.episode));
    if (fromHead) {
      await needParts(head);
      // the step the page's HTML shows is the one asked for: that HTML was painted before this
      // bundle was asked for (static/run-page-start.js), and the view draws the same elements
      // over it (tests/test_run_page.py compares them)
      if (PRERENDERED !== null && String(clampStep(wanted)) === PRERENDERED) {
        markFirstStep();
        markFirstPaint();
      }
      showFromHead(wanted, episodeHead);
    }
    // The task file and the whole run file are fetched once the first step is drawn (nothing but
    // the head stands before it); the panel's other checks and every other part wait for both.
    // Drawn from the head, the first step's frame is presented before any of them is parsed or
    // the later modules are evaluated: that work waits for the frame after it (a long task between
    // the two would hold back the next frame, the first one known to have shown the step).
    if (head) startRunDownload(runId);
    startTaskDownload((head || state.run).task_id);
    if (fromHead) {
      await nextFrame();
      markFirstPaint();
      await nextFrame();
    }
    const taskLoaded = loadTask((head || state.run).task_id).then((task) => {
      performance.mark("task-loaded");
      return task;
    });
    taskLoaded.catch(() => {}); // a failure is reported where it is awaited, below
    const later = laterModules();
    state.task = await taskLoaded;
    if (head) {
      state.run = await loadRun(runId);
      performance.mark("run-loaded");
      const mismatch = headMismatch(head, state.run);
      if (mismatch) throw new Error(`Run files for \u201c${runId}\u201d do not match: ${mismatch}. Export the site again.`);
    }
    modules = await later;
    await needParts(state.run);
  } catch (error) {
    showError(error.message);
    return;
  }
  if (!state.views) state.step = clampStep(wanted);
  await showWhole(modules);
}

main().catch((error) => showError(`Unexpected error: ${error.message}`));
