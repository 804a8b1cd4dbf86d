// Loading the site data files (docs/formats.md "Site data") relative to the page, or, in a single
// exported file, from its inlined <script type="application/json" id="site-data"> ({path: value}).

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

async function loadJson(url, what) {
  const files = bundledFiles();
  if (files) return bundledFile(files, url, what);
  let response;
  try {
    response = await fetch(url, { cache: "no-store" });
  } catch (error) {
    throw new Error(`${what} could not be fetched (${error.message}). Open the site over http, not file://.`);
  }
  if (!response.ok) {
    throw new Error(`${what} could not be loaded: HTTP ${response.status} for ${url}`);
  }
  try {
    return await response.json();
  } catch (error) {
    throw new Error(`${what} is not valid JSON (${error.message})`);
  }
}

/** The run file started by static/prefetch-run.js when it is this run's, else a fresh load. */
async function prefetchedOrLoad(runId, url, what) {
  const prefetch = window.__runPrefetch;
  if (!prefetch || prefetch.runId !== runId) return loadJson(url, what);
  window.__runPrefetch = null;
  const result = await prefetch.result;
  if (result.fetchError !== undefined) {
    throw new Error(`${what} could not be fetched (${result.fetchError}). Open the site over http, not file://.`);
  }
  if (result.value === undefined && result.parseError === undefined) {
    throw new Error(`${what} could not be loaded: HTTP ${result.status} for ${url}`);
  }
  if (result.parseError !== undefined) throw new Error(`${what} is not valid JSON (${result.parseError})`);
  return result.value;
}

/** Why a parsed run file does not have the shape of docs/formats.md, or null when it does. */
export function runShapeProblem(run) {
  if (!run || typeof run !== "object" || Array.isArray(run)) return "it is not a JSON object";
  for (const field of ["run_id", "task_id", "kind"]) {
    if (typeof run[field] !== "string") return `${field} is missing or not a string`;
  }
  if (!Array.isArray(run.steps) || run.steps.length === 0) return "it has no steps";
  for (const [index, step] of run.steps.entries()) {
    if (!step || typeof step !== "object" || Array.isArray(step)) return `steps[${index}] is not an object`;
    if (step.n !== index) return `steps[${index}].n is not ${index}`;
    if (typeof step.total !== "number" || typeof step.checks !== "string") return `steps[${index}] lacks total or checks`;
    if (!step.failed || typeof step.failed !== "object") return `steps[${index}].failed is not an object`;
  }
  return null;
}

/** data/runs/<id>.json, checked for its shape (an error names the run and what is wrong). */
export async function loadRun(runId) {
  const what = `Run file for \u201c${runId}\u201d`;
  const url = `data/runs/${encodeURIComponent(runId)}.json`;
  const run = bundledFiles() ? await loadJson(url, what) : await prefetchedOrLoad(runId, url, what);
  const problem = runShapeProblem(run);
  if (problem) throw new Error(`${what} is malformed: ${problem}.`);
  return run;
}

/** data/tasks/<id>.json */
export function loadTask(taskId) {
  return loadJson(`data/tasks/${encodeURIComponent(taskId)}.json`, `Task file for \u201c${taskId}\u201d`);
}

/** data/task-runs/<id>.json: {task_id, runs[{run_id, policy, model, reward, solved, steps}]} */
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
