// @ts-check
// Loading the site data files (docs/formats.md "Site data") relative to the site's top (dom.js siteRoot), or, in a single
// exported file, from its inlined <script type="application/json" id="site-data"> ({path: value});
// then, below, questions about a loaded run file that several views ask (run view, compare, search).

import { siteRoot } from "./dom.js";

let bundled;

function bundledFiles() {
  if (bundled === undefined) {
    const node = document.getElementById("site-data");
    bundled = node ? JSON.parse(node.textContent) : null;
  }
  return bundled;
}

function bundledFile(files, url, what) {
  let key = url;
  if (!Object.hasOwn(files, key)) {
    try {
      key = decodeURIComponent(url);
    } catch {
      key = url;
    }
  }
  if (!Object.hasOwn(files, key)) throw new Error(`${what} is not in this file (${url})`);
  return files[key];
}

/**
 * Where a media file of the site (a path under data/media/) is shown from: the path from this
 * page (siteRoot) on a served site; in a single exported file, the data: URL inlined for it (exporter/single_file.py),
 * or null when the file does not hold it.
 */
export function mediaAddress(url) {
  const files = bundledFiles();
  if (!files) return `${siteRoot()}${url}`;
  const inlined = Object.hasOwn(files, url) ? files[url] : null;
  return typeof inlined === "string" && /^data:(image\/png|audio\/wav);base64,[A-Za-z0-9+/=]*$/.test(inlined) ? inlined : null;
}

/**
 * A fetch of url as {status, ok, json()} or {fetchError}: the one static/prefetch-run.js started
 * for this path if any (taken once), else a new one.
 * @param {string} url
 * @returns {Promise<FetchResult>}
 */
function request(url) {
  const early = window.__prefetched && window.__prefetched[url];
  if (early) {
    delete window.__prefetched[url];
    return early;
  }
  return fetch(`${siteRoot()}${url}`).then(
    (response) => ({ status: response.status, ok: response.ok, json: () => response.json() }),
    (error) => ({ fetchError: error.message }),
  );
}

/** A data file's value; with missingOk, null when the server says 404 (the file is not there). */
async function loadJson(url, what, missingOk = false) {
  const files = bundledFiles();
  if (files) {
    try {
      return bundledFile(files, url, what);
    } catch (error) {
      if (missingOk) return null;
      throw error;
    }
  }
  const result = await request(url);
  if (result.fetchError !== undefined) {
    throw new Error(`${what} could not be fetched (${result.fetchError}). Open the site over http, not file://.`);
  }
  if (!result.ok) {
    if (missingOk && result.status === 404) return null;
    throw new Error(`${what} could not be loaded: HTTP ${result.status} for ${url}`);
  }
  try {
    return await result.json();
  } catch (error) {
    throw new Error(`${what} is not valid JSON (${error.message})`);
  }
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function stepsProblem(steps) {
  for (const [index, step] of steps.entries()) {
    if (!isObject(step)) return `steps[${index}] is not an object`;
    if (step.n !== index) return `steps[${index}].n is not ${index}`;
    if (typeof step.total !== "number" || typeof step.checks !== "string") return `steps[${index}] lacks total or checks`;
    if (!isObject(step.failed)) return `steps[${index}].failed is not an object`;
  }
  return null;
}

function fieldsProblem(run) {
  if (!isObject(run)) return "it is not a JSON object";
  for (const field of ["run_id", "task_id", "kind"]) {
    if (typeof run[field] !== "string") return `${field} is missing or not a string`;
  }
  return null;
}

/** Why a parsed run file does not have the shape of docs/formats.md, or null when it does. */
export function runShapeProblem(run) {
  const problem = fieldsProblem(run);
  if (problem) return problem;
  if (!Array.isArray(run.steps) || run.steps.length === 0) return "it has no steps";
  return stepsProblem(run.steps);
}

/** Why a parsed run head file does not have the shape of docs/formats.md, or null when it does. */
export function runHeadProblem(head) {
  const problem = fieldsProblem(head);
  if (problem) return problem;
  if (!Number.isInteger(head.step_count) || head.step_count < 1) return "step_count is not a positive whole number";
  if (typeof head.last_total !== "number") return "last_total is not a number";
  if (!Array.isArray(head.steps) || head.steps.length === 0) return "it has no steps";
  if (head.steps.length > head.step_count) return "it has more steps than step_count";
  const task = head.task;
  if (!isObject(task) || typeof task.title !== "string" || typeof task.instruction !== "string" || !Number.isInteger(task.check_count)
    || !Array.isArray(task.requirements) || !Array.isArray(task.panel) || !Array.isArray(task.checks)) return "task is missing or lacks title, instruction, check_count, requirements, panel or checks";
  return stepsProblem(head.steps);
}

/**
 * Start downloading data/runs/<id>.json now; a later loadRun(runId) reads and parses it (so the
 * download can overlap other work while the parse waits until the caller wants the run).
 */
export function startRunDownload(runId) {
  startDownload(`data/runs/${encodeURIComponent(runId)}.json`);
}

/** Start downloading data/tasks/<id>.json now; a later loadTask(taskId) parses it (as startRunDownload). */
export function startTaskDownload(taskId) {
  if (!taskFiles.has(`data/tasks/${encodeURIComponent(taskId)}.json`)) startDownload(`data/tasks/${encodeURIComponent(taskId)}.json`);
}

/** @param {string} url */
function startDownload(url) {
  if (bundledFiles()) return;
  window.__prefetched = window.__prefetched || Object.create(null);
  if (!window.__prefetched[url]) window.__prefetched[url] = request(url);
}

/**
 * data/runs/<id>.json, checked for its shape (an error names the run and what is wrong); with
 * missingOk, null when there is no such file.
 * @param {string} runId
 * @param {boolean} [missingOk]
 * @returns {Promise<RunDocument | null>}
 */
export async function loadRun(runId, missingOk = false) {
  const what = `Run file for \u201c${runId}\u201d`;
  const run = await loadJson(`data/runs/${encodeURIComponent(runId)}.json`, what, missingOk);
  if (run === null) return null;
  const problem = runShapeProblem(run);
  if (problem) throw new Error(`${what} is malformed: ${problem}.`);
  return run;
}

/**
 * data/run-heads/<id>.json (the run's first steps and what the view shows of them and of the
 * task before the whole run file and the task file are in), checked for its shape; null when there is none (a 404, or a single exported file,
 * which holds every run whole).
 * @param {string} runId
 * @returns {Promise<RunHead | null>}
 */
export async function loadRunHead(runId) {
  if (bundledFiles()) return null;
  const what = `Run head file for \u201c${runId}\u201d`;
  const head = await loadJson(`data/run-heads/${encodeURIComponent(runId)}.json`, what, true);
  if (head === null) return null;
  const problem = runHeadProblem(head);
  if (problem) throw new Error(`${what} is malformed: ${problem}.`);
  return head;
}

/** Why a whole run file does not belong with its head file (they come from different exports), or null. */
export function headMismatch(head, run) {
  if (run.run_id !== head.run_id) return `the run file is for \u201c${run.run_id}\u201d`;
  if (run.steps.length !== head.step_count) return `the run file has ${run.steps.length} steps, its head file says ${head.step_count}`;
  if (run.task_id !== head.task_id || run.kind !== head.kind) return "the run file names another task or kind than its head file";
  return null;
}

/**
 * The run id an old id now has (data/aliases.json: {legacy id: run id}, written for runs whose
 * id gained its identity digest), or null: deep links of sites published before still open.
 */
export async function runAlias(runId) {
  const aliases = await loadJson("data/aliases.json", "Run id aliases", true).catch(() => null);
  const target = aliases && Object.hasOwn(aliases, runId) ? aliases[runId] : null;
  return typeof target === "string" && target !== runId ? target : null;
}

// path -> promise of a per-task file: each is fetched once a page; a failed load is forgotten (a
// later call tries again).
const taskFiles = new Map();

function loadTaskFile(path, what) {
  if (!taskFiles.has(path)) {
    const loading = loadJson(path, what);
    taskFiles.set(path, loading);
    loading.catch(() => taskFiles.delete(path));
  }
  return taskFiles.get(path);
}

/**
 * data/tasks/<id>.json: the check catalog shared by every run of the task (fetched once a page).
 * @param {string} taskId
 * @returns {Promise<TaskDocument>}
 */
export function loadTask(taskId) {
  return loadTaskFile(`data/tasks/${encodeURIComponent(taskId)}.json`, `Task file for \u201c${taskId}\u201d`);
}

/**
 * data/task-inputs/<id>.json: {task_id, evaluation_interval, input_series{}, scenario_plots{}},
 * what only the check inspector's scenario plot and reproduce panel read (fetched once a page,
 * when the first check that needs it is opened).
 * @param {string} taskId
 * @returns {Promise<TaskInputs>}
 */
export function loadTaskInputs(taskId) {
  return loadTaskFile(`data/task-inputs/${encodeURIComponent(taskId)}.json`, `Scenario data file for task \u201c${taskId}\u201d`);
}

/**
 * data/task-runs/<id>.json: {task_id, runs[{run_id, policy, model, reward, solved, steps}]}
 * @param {string} taskId
 * @returns {Promise<TaskRuns>}
 */
export function loadTaskRuns(taskId) {
  return loadJson(`data/task-runs/${encodeURIComponent(taskId)}.json`, `Run list for task \u201c${taskId}\u201d`);
}

/** The whole of a long text the exporter split into part files (each a JSON string), joined. */
export async function loadTextParts(parts) {
  const texts = await Promise.all(parts.map((part) => loadJson(part, "Text part")));
  return texts.join("");
}

/** Any site data file by its path relative to the site's top (what: how errors name it). */
export function loadJsonFile(path, what) {
  return loadJson(path, what);
}

// -- questions about a loaded run file ----------------------------------------------------------

/** The state character of check `index` at step object `step` ("1", "0", "-", or "" when not graded yet). */
export function stateAt(step, index) {
  return step && step.checks ? step.checks[index] || "" : "";
}

const deltaIndexes = { failed: new WeakMap(), causes: new WeakMap() };

// check id -> [[step n, value], ...] of a field run files list only where it starts or changes.
function deltaIndex(run, field) {
  let index = deltaIndexes[field].get(run);
  if (index) return index;
  index = new Map();
  run.steps.forEach((step, n) => {
    for (const [checkId, value] of Object.entries(step[field] || {})) {
      if (!index.has(checkId)) index.set(checkId, []);
      index.get(checkId).push([n, value]);
    }
  });
  deltaIndexes[field].set(run, index);
  return index;
}

function detailIndex(run) {
  return deltaIndex(run, "failed");
}

/**
 * The failure detail of `checkId` at step n: run files list a detail only at the step where it
 * starts or changes ("" where it ends), so this is the latest one listed at or before n.
 */
export function failureAt(run, n, checkId) {
  const entries = detailIndex(run).get(checkId);
  if (!entries || entries[0][0] > n) return "";
  let low = 0;
  let high = entries.length - 1;
  while (low < high) {
    const middle = (low + high + 1) >> 1;
    if (entries[middle][0] <= n) low = middle;
    else high = middle - 1;
  }
  return entries[low][1] || "";
}

/**
 * The cause ({kind, summary, why?, facts}) of failing check `checkId` at step n, or null: run files
 * list a cause only where it starts or changes (null where it ends), like the details.
 */
export function causeAt(run, n, checkId) {
  let found = null;
  for (const [m, cause] of deltaIndex(run, "causes").get(checkId) || []) {
    if (m > n) break;
    found = cause;
  }
  return found && typeof found.summary === "string" ? found : null;
}

// blameAt's answers, per steps array and check id: answer[n] for every step n it walked back over
// while the check failed (the same answer from each of them), so moving step by step along a long
// red stretch costs one step's look-up, not the whole stretch's.
const blameMemo = new WeakMap();

/**
 * The blame of check `index` (id `checkId`) failing at step n: {step, hunk} of the latest step at
 * or before n where it turned red (hunk: that step's diff hunk index, or null), or null when it
 * does not fail at n.
 */
export function blameAt(run, n, index, checkId) {
  const steps = run.steps;
  if (stateAt(steps[n], index) !== "0") return null;
  let byCheck = blameMemo.get(steps);
  if (!byCheck) blameMemo.set(steps, (byCheck = new Map()));
  let memo = byCheck.get(checkId);
  if (!memo) byCheck.set(checkId, (memo = []));
  const walked = [];
  let found = null;
  for (let m = n; m >= 0; m -= 1) {
    if (memo[m] !== undefined) {
      found = memo[m];
      break;
    }
    const red = stateAt(steps[m], index) === "0";
    if (red) walked.push(m);
    const blame = steps[m].blame || {};
    if (Object.hasOwn(blame, checkId)) {
      found = { step: m, hunk: blame[checkId] };
      break;
    }
    if (!red) break;
  }
  for (const m of walked) memo[m] = found;
  return found;
}

/** The step's final reward level: run.final.reward when it is a number, else the last step's total. */
export function finalReward(run) {
  const final = run.final || {};
  return typeof final.reward === "number" ? final.reward : run.steps.at(-1).total;
}

/** A JSON text of a tool call, to compare two calls. */
export function callKey(step) {
  return step.tool ? JSON.stringify([step.tool.name, step.tool.arguments]) : "";
}

/**
 * The first step where runs a and b differ: {n, what: ["tool call", "check states", "reward"]},
 * {n, what: ["length"]} when one run ends first, or null when they are the same step by step.
 */
export function firstDivergence(a, b) {
  const common = Math.min(a.steps.length, b.steps.length);
  for (let n = 0; n < common; n += 1) {
    const sa = a.steps[n];
    const sb = b.steps[n];
    const what = [];
    if (callKey(sa) !== callKey(sb)) what.push("tool call");
    if ((sa.checks || "") !== (sb.checks || "")) what.push("check states");
    if (Math.abs(sa.total - sb.total) > 1e-12) what.push("reward");
    if (what.length > 0) return { n, what };
  }
  if (a.steps.length !== b.steps.length) return { n: common, what: ["length"] };
  return null;
}
