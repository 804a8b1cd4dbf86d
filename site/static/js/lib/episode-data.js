// @ts-check
// Reading an action episode's run file: the observation in force at a step and its service rows.
// The data is the run file's steps[n].env (exporter/episodes.py).

export function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** value when it is an array, else []. */
export function list(value) {
  return Array.isArray(value) ? value : [];
}

/** The observation in force at step n (its own, or the last one before it) and the step it is from. */
export function observationAt(run, n) {
  if (n < 0) return { observation: null, from: null };
  const env = run.steps[n].env;
  if (!env || env.shown_from === null || env.shown_from === undefined) return { observation: null, from: null };
  const owner = run.steps[env.shown_from].env;
  return { observation: owner && isObject(owner.observation) ? owner.observation : null, from: env.shown_from };
}

/** The observation's services that have a name: [{name, status, cpu_percent, ...}]. */
export function serviceRows(observation) {
  return list(observation && observation.services).filter((row) => isObject(row) && typeof row.name === "string");
}

/** Show node only when shown is true (the hidden attribute); returns shown. */
export function showIf(node, shown) {
  node.hidden = !shown;
  return shown;
}
