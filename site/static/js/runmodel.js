// Questions about a loaded run file that several views ask (run view, compare, search).

/** The state character of check `index` at step object `step` ("1", "0", "-", or "" when not graded yet). */
export function stateAt(step, index) {
  return step && step.checks ? step.checks[index] || "" : "";
}

const detailIndexes = new WeakMap();

function detailIndex(run) {
  let index = detailIndexes.get(run);
  if (index) return index;
  index = new Map();
  run.steps.forEach((step, n) => {
    for (const [checkId, detail] of Object.entries(step.failed || {})) {
      if (!index.has(checkId)) index.set(checkId, []);
      index.get(checkId).push([n, detail]);
    }
  });
  detailIndexes.set(run, index);
  return index;
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
