// Loading the site data files (docs/formats.md "Site data") relative to the page.

async function loadJson(url, what) {
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

/** data/runs/<id>.json */
export function loadRun(runId) {
  return loadJson(`data/runs/${encodeURIComponent(runId)}.json`, `Run file for \u201c${runId}\u201d`);
}

/** data/tasks/<id>.json */
export function loadTask(taskId) {
  return loadJson(`data/tasks/${encodeURIComponent(taskId)}.json`, `Task file for \u201c${taskId}\u201d`);
}
