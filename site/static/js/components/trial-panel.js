// The Harbor trial behind an imported run: every named reward, how its task was matched, the
// exception, token totals (copied context left out), the verifier's output, the artifact
// manifest, agent logs, media parts without a file, and each step of a multi-step trial.
//
// Stable ids: #trial-panel (hidden for runs that are no Harbor trial), #trial-facts,
// #trial-rewards, #trial-exception, #trial-tokens, #trial-artifacts, #trial-verifier,
// #trial-logs, #trial-steps.

import { blockFor, byId, clear, el } from "../lib/dom.js";

function rewardsTable(rewards, caption) {
  const names = Object.keys(rewards || {});
  if (names.length === 0) return el("p", { class: "muted" }, "No reward recorded.");
  // the headline as harbor view shows it: `reward`, else the first named reward that is a number
  const first = Object.hasOwn(rewards, "reward") && typeof rewards.reward === "number" ? "reward"
    : names.find((name) => typeof rewards[name] === "number");
  const headline = first === undefined ? "" : `: ${first} ${rewards[first]}`;
  return el("details", { class: "trial-rewards-box" }, el("summary", null, `${caption} (${names.length})${headline}`), el("table", { class: "data-table trial-rewards" }, el("caption", null, caption),
    el("thead", null, el("tr", null, el("th", { scope: "col" }, "Reward"), el("th", { scope: "col", class: "num" }, "Value"))),
    el("tbody", null, names.map((name) => el("tr", { dataset: { reward: name } },
      el("th", { scope: "row" }, name), el("td", { class: "num" }, String(rewards[name])))))));
}

function exceptionBlock(exception, text) {
  if (!exception) return null;
  return el("div", { class: "block trial-exception" },
    el("p", null, el("strong", null, exception.type), `: ${exception.message}`),
    exception.traceback || text ? el("details", null, el("summary", null, "Traceback"),
      el("pre", { class: "text-block", tabindex: "0" }, exception.traceback || text.text || "")) : null);
}

function artifactsTable(artifacts) {
  if (!artifacts) return el("p", { class: "muted" }, "No artifact manifest.");
  if (artifacts.problem) return el("p", { class: "error-text" }, artifacts.problem);
  return el("table", { class: "data-table trial-artifacts" }, el("caption", null, "Artifacts (manifest.json)"),
    el("thead", null, el("tr", null, ["Source", "Type", "Status"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", null, artifacts.entries.map((entry) => el("tr", { dataset: { status: entry.status } },
      el("td", null, el("code", null, String(entry.source))), el("td", null, String(entry.type)),
      el("td", { class: entry.status === "failed" ? "status-failed" : null }, String(entry.status))))));
}

function verifierBlock(verifier) {
  if (!verifier) return null;
  const texts = [["stdout", "test-stdout.txt"], ["stderr", "test-stderr.txt"]]
    .filter(([key]) => verifier[key])
    .map(([key, name]) => el("details", { class: "verifier-output" }, el("summary", null, `Verifier ${name}`),
      el("pre", { class: "text-block", tabindex: "0" }, verifier[key].text ?? verifier[key].problem ?? "")));
  const files = verifier.files && verifier.files.length ? el("p", { class: "muted" }, `Verifier files: ${verifier.files.join(", ")}`) : null;
  return el("div", { class: "block" }, texts, files);
}

function tokensBlock(tokens) {
  if (!tokens) return null;
  const row = (label, t) => el("tr", null, el("th", { scope: "row" }, label),
    ["prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"].map((k) => el("td", { class: "num" }, String(t[k]))));
  return el("table", { class: "data-table trial-tokens" },
    el("caption", null, `Tokens (${tokens.main.copied_context_steps + tokens.subagents.copied_context_steps} copied-context steps left out)`),
    el("thead", null, el("tr", null, ["", "Prompt", "Completion", "Cached", "Cost (USD)"].map((h) => el("th", { scope: "col" }, h)))),
    el("tbody", null, row("Agent", tokens.main), row("Subagents", tokens.subagents), row("All", tokens.all)));
}

function partBlocks(part) {
  return [exceptionBlock(part.exception), verifierBlock(part.verifier), artifactsTable(part.artifacts),
    part.agent_logs && part.agent_logs.length ? el("p", { class: "muted trial-logs" }, `Agent logs: ${part.agent_logs.map((l) => l.path).join(", ")}`) : null];
}

function facts(harbor) {
  const match = harbor.task_match || {};
  const rows = [["Job", harbor.job], ["Trial", harbor.trial], ["ATIF", harbor.schema_version],
    ["Task matched", match.how ? `by ${match.how}` : "no (not re-graded)"], ["Reward from", harbor.reward_source]];
  return el("dl", { class: "trial-facts", id: "trial-facts" }, rows.filter(([, v]) => v).map(([k, v]) => [el("dt", null, k), el("dd", null, String(v))]),
    match.note ? [el("dt", null, "Note"), el("dd", null, match.note)] : null);
}

/** Fill #trial-panel from run.harbor (hidden when the run has none). */
export function renderTrialPanel(run) {
  const harbor = run.harbor;
  const panel = blockFor("trial-panel", Boolean(harbor)); // in its <template> until a run has one
  if (!panel) return;
  panel.hidden = !harbor;
  if (!harbor) return;
  const body = clear(byId("trial-body"));
  const missing = (harbor.media || []).filter((m) => !m.stored);
  // Node.append turns null into the text "null": absent parts are "" here (el() skips null itself)
  body.append(facts(harbor), el("div", { id: "trial-rewards" }, rewardsTable(harbor.rewards, "Every named reward (verifier)")),
    el("div", { id: "trial-exception" }, exceptionBlock(harbor.exception, harbor.exception_txt)),
    el("div", { id: "trial-tokens" }, tokensBlock(harbor.tokens)),
    el("div", { id: "trial-verifier" }, verifierBlock(harbor.verifier)),
    el("div", { id: "trial-artifacts" }, harbor.multi_step ? null : artifactsTable(harbor.artifacts)),
    el("div", { id: "trial-logs" }, harbor.multi_step ? null : partBlocks({ agent_logs: harbor.agent_logs })[3]),
    missing.length ? el("p", { class: "muted" }, `Media parts without a file: ${missing.map((m) => `${m.path} (${m.problem})`).join("; ")}`) : "",
    el("div", { id: "trial-steps" }, (harbor.steps || []).map((step) => el("section", { class: "trial-step", dataset: { step: step.name } },
      el("h3", null, `Trial step ${step.name}`), rewardsTable(step.rewards, `Rewards of ${step.name}`), partBlocks(step)))));
}
