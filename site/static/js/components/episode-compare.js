// Compare for two episode runs (compare.html, laid out in site/templates/_compare_episode.html):
// the two action sequences aligned (longest common subsequence of the calls, so an action one
// run inserts does not shift every later row), where the aligned sequences first diverge, the
// two unclamped reward sums with the clamp drawn, and the grader's score parts side by side
// (run.final.episode.parts, recorder/episodes/score.py). The alerting panels (checks whose final
// state differs, per-requirement scores) are hidden: episodes have none.
//
// Stable ids: #compare-episode, #compare-actions tbody tr[data-align="same"|"a"|"b"|"differ"]
// ("differ": another call, or the same call with another reward)
// [data-step-a][data-step-b], tr.first-divergence, #compare-episode-divergence[data-step-a][data-step-b],
// #compare-sums-svg path#sum-a / path#sum-b, #compare-parts tr[data-part] td[data-side][data-value].
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el, fill, svg } from "../lib/dom.js";
import { callKey } from "../lib/data.js";
import { formatReward } from "../lib/format.js";
import { rewardSums, stepMark } from "./episode-curve.js";

/** Pair the one-sided rows between two common calls: A's k-th with B's k-th, the rest alone. */
function pairGaps(rows) {
  const out = [];
  let onlyA = [];
  let onlyB = [];
  const flush = () => {
    for (let k = 0; k < Math.max(onlyA.length, onlyB.length); k += 1) out.push({ a: onlyA[k] ?? null, b: onlyB[k] ?? null });
    onlyA = [];
    onlyB = [];
  };
  for (const row of rows) {
    if (row.a !== null && row.b === null) onlyA.push(row.a);
    else if (row.a === null && row.b !== null) onlyB.push(row.b);
    else {
      flush();
      out.push(row);
    }
  }
  flush();
  return out;
}

/**
 * Align the agent steps of a and b: [{a: n|null, b: n|null}]. Common calls (the longest common
 * subsequence) share a row; between two of them, the other calls are paired in order.
 */
export function alignSteps(a, b) {
  const sa = a.steps.slice(1);
  const sb = b.steps.slice(1);
  const ka = sa.map(callKey);
  const kb = sb.map(callKey);
  const table = Array.from({ length: sa.length + 1 }, () => new Array(sb.length + 1).fill(0));
  for (let i = sa.length - 1; i >= 0; i -= 1) {
    for (let j = sb.length - 1; j >= 0; j -= 1) {
      table[i][j] = ka[i] === kb[j] ? table[i + 1][j + 1] + 1 : Math.max(table[i + 1][j], table[i][j + 1]);
    }
  }
  const rows = [];
  let i = 0;
  let j = 0;
  while (i < sa.length || j < sb.length) {
    if (i < sa.length && j < sb.length && ka[i] === kb[j]) rows.push({ a: sa[i++].n, b: sb[j++].n });
    else if (j >= sb.length || (i < sa.length && table[i + 1][j] >= table[i][j + 1])) rows.push({ a: sa[i++].n, b: null });
    else rows.push({ a: null, b: sb[j++].n });
  }
  return pairGaps(rows);
}

function callText(step) {
  const tool = step.tool || {};
  const args = tool.arguments && typeof tool.arguments === "object" ? tool.arguments : {};
  return `${tool.name ?? step.source}(${Object.entries(args).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ")})`;
}

function sideCell(run, n) {
  if (n === null) return el("td", { class: "lane-empty" }, "\u2014");
  const step = run.steps[n];
  const mark = stepMark(step);
  const href = `run.html?${new URLSearchParams({ run: run.run_id, step: String(n) })}`;
  return el("td", { dataset: { mark } },
    el("a", { href }, `step ${n}`), " ", el("code", null, callText(step)),
    el("div", { class: "muted small" }, step.env && step.env.error ? "failed action" : `reward ${formatReward(step.reward)} \u2192 total ${formatReward(step.total)}${mark === "penalty" ? " \u00b7 penalised" : ""}`));
}

function alignKind(a, b, row) {
  if (row.a === null) return "b";
  if (row.b === null) return "a";
  const sameCall = callKey(a.steps[row.a]) === callKey(b.steps[row.b]);
  return sameCall && Math.abs(a.steps[row.a].reward - b.steps[row.b].reward) < 1e-9 ? "same" : "differ";
}

function renderActions(a, b) {
  const rows = alignSteps(a, b);
  const first = rows.findIndex((row) => alignKind(a, b, row) !== "same");
  const body = rows.map((row, index) => el("tr", {
    class: index === first ? "first-divergence" : null,
    dataset: { align: alignKind(a, b, row), stepA: row.a === null ? "" : String(row.a), stepB: row.b === null ? "" : String(row.b) },
  }, sideCell(a, row.a), sideCell(b, row.b)));
  fill(byId("compare-actions").tBodies[0], body);
  const target = byId("compare-episode-divergence");
  const at = rows[first];
  target.dataset.stepA = at && at.a !== null ? String(at.a) : "";
  target.dataset.stepB = at && at.b !== null ? String(at.b) : "";
  const same = rows.filter((row) => alignKind(a, b, row) === "same").length;
  fill(target, !at ? `The two runs take the same ${rows.length} actions with the same rewards.`
    : `${same} of ${rows.length} aligned rows are the same action with the same reward. They first part at row ${first + 1}: `
      + `${at.a === null ? "A has no action there" : `A step ${at.a} ${callText(a.steps[at.a])}`}; ${at.b === null ? "B has no action there" : `B step ${at.b} ${callText(b.steps[at.b])}`}.`);
}

function renderSums(a, b) {
  const W = 1000, H = 200, P = { left: 44, right: 14, top: 12, bottom: 26 };
  const sumsA = rewardSums(a.steps);
  const sumsB = rewardSums(b.steps);
  const values = [...sumsA, ...sumsB];
  const low = Math.min(0, ...values);
  const high = Math.max(1, ...values);
  const last = Math.max(1, a.steps.length - 1, b.steps.length - 1);
  const x = (n) => P.left + (n / last) * (W - P.left - P.right);
  const y = (v) => P.top + (1 - (v - low) / (high - low)) * (H - P.top - P.bottom);
  const root = svg("svg", { id: "compare-sums-svg", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Sums of step rewards, not clamped: A ends at ${formatReward(sumsA.at(-1))}, B at ${formatReward(sumsB.at(-1))}` });
  for (const bound of [0, 1]) {
    root.append(svg("line", { class: "clamp-line", x1: P.left, x2: W - P.right, y1: y(bound), y2: y(bound) }),
      svg("text", { class: "axis-label", x: P.left - 6, y: y(bound) + 4, "text-anchor": "end" }, bound.toFixed(1)));
  }
  for (const [id, sums, cls] of [["sum-a", sumsA, "curve-a"], ["sum-b", sumsB, "curve-b"]]) {
    let d = `M ${x(0)} ${y(sums[0])}`;
    for (let n = 1; n < sums.length; n += 1) d += ` H ${x(n)} V ${y(sums[n])}`;
    root.append(svg("path", { id, class: `compare-line ${cls}`, d, fill: "none", dataset: { sums: sums.join(",") } }));
  }
  fill(byId("compare-sums"), root);
}

function partValue(run, name) {
  const parts = ((run.final || {}).episode || {}).parts || {};
  const part = (parts.parts || []).find((p) => p.name === name);
  return part ? part.amount : null;
}

function renderParts(a, b) {
  const names = [];
  for (const run of [a, b]) for (const p of (((run.final || {}).episode || {}).parts || {}).parts || []) if (!names.includes(p.name)) names.push(p.name);
  const cell = (value, side) => el("td", { class: "num", dataset: { side, value: value === null ? "" : String(value) } }, value === null ? "\u2014" : formatReward(value));
  const score = (run) => (typeof (run.final || {}).reward === "number" ? run.final.reward : null);
  fill(byId("compare-parts").tBodies[0],
    names.map((name) => el("tr", { dataset: { part: name } }, el("th", { scope: "row" }, name), cell(partValue(a, name), "a"), cell(partValue(b, name), "b"))),
    el("tr", { dataset: { part: "final score" }, class: "parts-final" }, el("th", { scope: "row" }, "final score"), cell(score(a), "a"), cell(score(b), "b")));
}

/** Fill the episode compare of runs a and b and hide the alerting panels. */
export function renderEpisodeCompare(a, b) {
  byId("compare-episode").hidden = false;
  byId("compare-checks").closest(".run-columns").hidden = true;
  renderActions(a, b);
  renderSums(a, b);
  renderParts(a, b);
}
