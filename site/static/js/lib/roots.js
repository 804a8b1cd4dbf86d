// @ts-check
// Failures that share a root: the checks panel of the run view and the compare view group them.

const UNLOADED = /^(\S+)(?: line \d+)? does not load/;
const UNDEFINED = /defines (?:an alerting rule named )?(\S+)/;

/**
 * The root a failing check shares with others, from its recorded cause: a file that does not
 * load (its syntax check, and every check that cannot be graded without it), or an alert no
 * rule defines (every check of that alert; all of them under the first rule file that does not
 * load, when one does not). Null for a failure of its own.
 */
function rootOf(cause, brokenRules) {
  if (!cause || typeof cause.kind !== "string") return null;
  const summary = String(cause.summary || "");
  if (cause.kind === "syntax-error" || cause.kind.endsWith("-unloaded")) {
    const file = UNLOADED.exec(summary);
    return file ? `${file[1]} does not load` : `${cause.kind}`;
  }
  if (cause.kind === "alert-undefined" || cause.kind === "preservation-removed") {
    if (brokenRules) return `${brokenRules} does not load`;
    const alert = UNDEFINED.exec(summary);
    return cause.kind === "alert-undefined" && alert ? `no rule defines ${alert[1]}` : null;
  }
  return null;
}

/**
 * The root of each of a step's failing checks, `failing` as [{id, cause}] (every failing check
 * of the step: a rule file that does not load is found among them): Map id -> root, holding
 * only the failures that have one (see rootOf).
 */
export function failureRoots(failing) {
  const broken = failing.map((failure) => failure.cause)
    .filter((cause) => cause && cause.kind === "syntax-error")
    .map((cause) => (UNLOADED.exec(String(cause.summary || "")) || [])[1])
    .find((file) => file && !file.startsWith("alertmanager")) || null;
  const roots = new Map();
  for (const { id, cause } of failing) {
    const root = rootOf(cause, broken);
    if (root) roots.set(id, root);
  }
  return roots;
}

/** The roots that two or more of `roots`' values share, as [[root, count]], most shared first. */
export function sharedRoots(roots) {
  const counts = new Map();
  for (const root of roots.values()) counts.set(root, (counts.get(root) || 0) + 1);
  return [...counts].filter(([, count]) => count > 1).sort((a, b) => b[1] - a[1]);
}
