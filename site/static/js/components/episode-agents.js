// The two lanes of a dual-agent run (#episode-agents, site/templates/_episode_board.html): the
// observer's findings and the responder's actions in step order, each finding linked to the
// first responder step whose view held it (findings_seen, ARIA's agent_a_findings_count) and the
// responder steps marked with the findings they had (recorder/episodes/dual.py).
//
// Stable ids: #episode-lanes tbody tr[data-step][data-agent="observer"|"responder"]
// [aria-current="step" on the step shown], a.finding-link[data-to-step], .findings-seen.
//
// Every string from a run goes in as text (lib/dom.js), never as HTML.

import { byId, el, fill, siteRoot } from "../lib/dom.js";
import { formatDelta } from "../lib/format.js";
import { showIf } from "../lib/episode-data.js";

function actionText(step) {
  const tool = step.tool || {};
  const args = tool.arguments && typeof tool.arguments === "object" ? tool.arguments : {};
  const fields = Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`).join(", ");
  return `${tool.name ?? "?"}(${fields})`;
}

/** {finding index: first responder step n whose view held it}. */
export function findingReaders(steps) {
  const readers = {};
  for (const step of steps) {
    const env = step.env || {};
    if (env.agent !== "responder" || typeof env.findings_seen !== "number") continue;
    for (let i = 1; i <= env.findings_seen; i += 1) if (!(i in readers)) readers[i] = step.n;
  }
  return readers;
}

function stepLink(n, text) {
  return el("a", { href: `${siteRoot()}run.html?${new URLSearchParams({ run: RUN_ID.value, step: String(n) })}`, class: "finding-link", dataset: { toStep: String(n) } }, text);
}

const RUN_ID = { value: "" };

function observerCell(env, readers) {
  const reader = readers[env.finding_index];
  return el("td", { class: "lane-observer" },
    el("div", null, env.finding_index ? `Finding ${env.finding_index}: ` : "Refused: ", String(env.finding ?? "")),
    el("div", { class: "muted small" },
      `observer reward ${formatDelta(env.observer_reward ?? 0)}`,
      reader !== undefined ? [" \u00b7 reached the responder at ", stepLink(reader, `step ${reader}`), " and every step after"] : env.finding_index ? " \u00b7 no responder step came after it" : ` \u00b7 ${env.refused ?? ""}`));
}

function responderCell(step) {
  const env = step.env || {};
  return el("td", { class: "lane-responder" },
    el("code", null, actionText(step)),
    el("div", { class: "muted small findings-seen" },
      env.error ? `failed: ${env.error.message ?? ""}` : `reward ${formatDelta(step.reward)}`,
      typeof env.findings_seen === "number" ? ` \u00b7 with ${env.findings_seen} finding${env.findings_seen === 1 ? "" : "s"} in its view` : ""));
}

/**
 * Fill the lanes of a dual-agent run (hidden for other runs); a click on a link calls onSelect(n).
 * Returns update(n), which marks the row of step n.
 */
export function renderAgents(run, onSelect) {
  const dual = run.steps.some((step) => step.env && step.env.agent);
  if (!dual) {
    document.getElementById("episode-agents")?.remove(); // a single agent's page holds no empty lanes table (gone already when drawn again)
    return () => {};
  }
  showIf(byId("episode-agents"), true);
  RUN_ID.value = run.run_id;
  const readers = findingReaders(run.steps);
  const table = byId("episode-lanes");
  table.onclick = (event) => {  // one listener: a link opens its step in this view
    const link = event.target instanceof Element ? event.target.closest("a.finding-link") : null;
    if (!link || !table.contains(link)) return;
    event.preventDefault();
    onSelect(Number(link.dataset.toStep));
  };
  const rows = run.steps.slice(1).map((step) => {
    const env = step.env || {};
    const observer = env.agent === "observer";
    return el("tr", { dataset: { step: String(step.n), agent: String(env.agent ?? "") } },
      el("td", { class: "num" }, stepLink(step.n, String(step.n))),
      observer ? observerCell(env, readers) : el("td", { class: "lane-empty" }),
      observer ? el("td", { class: "lane-empty" }) : responderCell(step));
  });
  fill(table.tBodies[0], rows);
  let current = null;
  return function update(n) {
    if (current) current.removeAttribute("aria-current");
    current = rows[n - 1] || null;
    if (current) current.setAttribute("aria-current", "step");
  };
}
