// @ts-check
// Number and text formats shared by the views (a run file's texts cut before layout: clip).

/**
 * Text from a run file cut to at most `max` characters (an ellipsis added): a stranger's run can
 * carry a megabyte-long word, and laying one out freezes the page (a 300,000-character summary
 * with no space took 43 s before the checks panel appeared).
 */
export function clip(text, max) {
  const value = typeof text === "string" ? text : String(text ?? "");
  if (value.length <= max) return value;
  // a surrogate pair is not cut in two (the cut ends before it: exporter/js_text.py clip alike)
  const end = /[\ud800-\udbff]/.test(value[max - 1] ?? "") ? max - 1 : max;
  return `${value.slice(0, end)}\u2026`;
}

/**
 * A count with thousands separators, as toLocaleString("en") writes an integer ("12,345",
 * "-1,000"; a fraction keeps all its digits: "1,234.5"; exponent forms as String()). Written
 * out because the first Intl call of a page loads the browser's locale data (20-40 ms in a fresh
 * tab, measured in Debian's Chromium), and the run view counts before its first step is drawn.
 */
export function formatCount(value) {
  const number = Number(value);
  if (!Number.isFinite(number)) return String(value);
  const [whole, fraction] = String(Math.abs(number)).split(".");
  if (/e/i.test(whole)) return String(number);
  const grouped = whole.replace(/\B(?=(\d{3})+$)/g, ",");
  return `${number < 0 ? "-" : ""}${grouped}${fraction === undefined ? "" : `.${fraction}`}`;
}

/**
 * What the home page's run column shows of a run id: the id after its task's id and "__" when it
 * starts so, else the whole id (the task has its own column; exporter/render.py run_label alike).
 * @param {string} runId
 * @param {string} taskId
 * @returns {string}
 */
export function runLabel(runId, taskId) {
  const prefix = `${taskId}__`;
  return runId.startsWith(prefix) && runId.length > prefix.length ? runId.slice(prefix.length) : runId;
}

/** A reward level with 4 decimals ("0.4215"). */
export function formatReward(value) {
  return typeof value === "number" && Number.isFinite(value) ? value.toFixed(4) : "\u2014";
}

/** A reward change with a sign ("+0.1000", "-0.0420", "±0.0000"). */
export function formatDelta(value) {
  if (typeof value !== "number" || !Number.isFinite(value)) return "";
  if (value > 0) return `+${value.toFixed(4)}`;
  if (value < 0) return `\u2212${Math.abs(value).toFixed(4)}`;
  return "\u00b10.0000";
}

/** "up", "down", "flat" (graded, no change) or "none" (not graded) for a step. */
export function rewardTrend(step) {
  if (!step.graded) return "none";
  if (step.reward > 1e-12) return "up";
  if (step.reward < -1e-12) return "down";
  return "flat";
}

/** How a run's status reads: "complete", "incomplete" (status running: stopped before its end,
 * or still being recorded: a page cannot tell which), "failed". */
export function statusLabel(status) {
  if (status === "running") return "incomplete";
  return status || "complete";
}

/** A badge for a run that is not complete (null for a complete one), class status-<status>. */
export function statusBadge(el, status) {
  if (!status || status === "complete") return null;
  return el("span", { class: ["badge", "badge-fail", "status-badge", `status-${status}`], dataset: { status } }, statusLabel(status));
}

/** statusBadge after a space, as the pages' own rows have it (its text not glued to the run id's
 * before it), or null for a complete run. */
export function statusBadgeAfterSpace(el, status) {
  const badge = statusBadge(el, status);
  return badge ? [" ", badge] : null;
}
