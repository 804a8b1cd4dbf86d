// The attempts-per-task table past its preview: rows from data/attempts.json, loaded on demand.
//
// index.html carries the first rows as HTML and a button #attempts-more; a click loads
// data/attempts.json (the remaining rows, pass@k already cut to the k the page shows) and
// appends them to #attempts tbody in the same cells as the template (_attempts.html).
// #attempts-status says what happened; a failed load says so there, not as a page error.

import { byId, el, fill } from "../lib/dom.js";
import { loadJsonFile } from "../lib/data.js";
import { formatReward } from "../lib/format.js";

function rate(value) {
  return `${(value * 100).toFixed(0)}%`;
}

function passAt(passAtK) {
  const ks = Object.keys(passAtK).map(Number).sort((a, b) => a - b);
  if (ks.length === 0) return el("span", { class: "muted" }, "\u2014");
  return el("span", { class: "pass-at" }, ks.map((k, i) => [i ? ", " : "", el("span", { dataset: { k: String(k) } }, `pass@${k} ${rate(passAtK[String(k)])}`)]));
}

function attemptRow(row) {
  const interval = row.ci_low === null ? "\u2014" : `${formatReward(row.ci_low)}\u2013${formatReward(row.ci_high)}`;
  return el(
    "tr",
    { dataset: { taskId: row.task_id, agent: row.agent } },
    el("th", { scope: "row" }, el("code", null, row.task_id)),
    el("td", null, row.agent),
    el("td", null, row.model || ""),
    el("td", { class: "num" }, String(row.attempts)),
    el("td", { class: "num" }, String(row.solved)),
    el("td", { dataset: { field: "pass_at" } }, passAt(row.pass_at)),
    el("td", { class: "num", dataset: { field: "mean_reward" } }, formatReward(row.mean_reward)),
    el("td", { class: "num", dataset: { field: "interval" } }, interval),
  );
}

/** Wire #attempts-more (absent when the page holds every row) to load and append the rest. */
export function installAttemptsMore() {
  const button = document.getElementById("attempts-more");
  if (!button || button.dataset.wired) return;
  button.dataset.wired = "1";
  button.addEventListener("click", async () => {
    button.disabled = true;
    const status = byId("attempts-status");
    try {
      const document_ = await loadJsonFile("data/attempts.json", "The attempt rows (data/attempts.json)");
      byId("attempts").tBodies[0].append(...document_.attempts.map(attemptRow));
      fill(status, `All ${button.dataset.total} attempt groups.`);
    } catch (error) {
      fill(status, `${error.message}.`);
      button.disabled = false;
    }
  });
}
