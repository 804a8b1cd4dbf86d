// Copy a run as Markdown (the run view's button): the same layout as `alertforge export RUN
// --markdown` (exporter/markdown.py), built from the site's run file, whose texts were masked
// at export as on publish. Long parts are cut with a link to their step.

import { blameAt, causeAt, failureAt } from "../lib/data.js";
import { el, fill } from "../lib/dom.js";
import { formatCount } from "../lib/format.js";

const PART_CHARS = { instruction: 4000, message: 2000, arguments: 2000, output: 2000, diff: 3000 };

/** `text` in a fenced block whose fence is longer than any backtick run inside it (CommonMark). */
export function fence(text, info = "") {
  const longest = Math.max(0, ...(text.match(/`+/g) || []).map((run) => run.length));
  const marks = "`".repeat(Math.max(3, longest + 1));
  return `${marks}${info}\n${text}\n${marks}`;
}

function stepLink(run, n) {
  const url = new URL(location.href);
  url.search = new URLSearchParams({ ...(url.searchParams.get("page") ? { page: "run" } : {}), run: run.run_id, step: String(n) }).toString();
  url.hash = "";
  return url.toString();
}

function cut(text, part, where, lazy) {
  const limit = PART_CHARS[part];
  if (lazy) return `${text.slice(0, limit)}\n[... shortened in the site data (${lazy.chars} characters); the full text: ${where}]`;
  if (text.length <= limit) return text;
  return `${text.slice(0, limit)}\n[... ${text.length - limit} more characters cut; the full text: ${where}]`;
}

function diffText(diff) {
  const lines = [`--- ${diff.old_exists ? diff.path : "/dev/null"}`, `+++ ${diff.path}`];
  for (const hunk of diff.hunks) {
    lines.push(hunk.header);
    for (const [op, text] of hunk.lines) lines.push(`${op}${text}`);
  }
  return lines.join("\n");
}

function stepSection(run, step, task) {
  const where = stepLink(run, step.n);
  const lazy = step.lazy || {};
  const reward = step.graded ? `reward ${step.reward >= 0 ? "+" : ""}${step.reward.toFixed(3)}, total ${step.total.toFixed(3)}` : "not graded";
  const out = [`### Step ${step.n} (${step.source}; ${reward})`, ""];
  if (step.message && step.message === task.instruction) out.push("(the task above)", "");
  else if (step.message) out.push(cut(step.message, "message", where, lazy.message), "");
  if (step.tool) out.push(`Tool call \`${step.tool.name}\`:`, "", fence(cut(JSON.stringify(step.tool.arguments, null, 1), "arguments", where, lazy.arguments), "json"), "");
  if (step.output) out.push("Output:", "", fence(cut(step.output, "output", where, lazy.output)), "");
  if (step.diff && step.diff.hunks.length > 0) out.push("Diff:", "", fence(cut(diffText(step.diff), "diff", where, lazy.diff), "diff"), "");
  return out;
}

function failingSection(run, task) {
  const n = run.steps.length - 1;
  const states = run.steps[n].checks || "";
  const failing = task.checks.map((check, index) => [check, index]).filter(([, index]) => states[index] === "0");
  const out = [`## Failing checks at the last step (${failing.length})`, ""];
  for (const [check, index] of failing) {
    const cause = causeAt(run, n, check.id);
    const blame = blameAt(run, n, index, check.id);
    out.push(`- **\`${check.id}\`** (${check.family}): ${check.label || ""}`);
    out.push(`  - detail: ${failureAt(run, n, check.id) || "(no detail recorded)"}`);
    out.push(cause ? `  - cause (${cause.kind}): ${cause.summary}` : "  - cause: none recorded (graded before causes existed)");
    if (!blame || blame.step === 0) out.push("  - blame: failing from the start (the pristine repo); no step fixed it");
    else out.push(`  - blame: step ${blame.step}${blame.hunk === null ? "" : `, hunk ${blame.hunk + 1}`} turned it red (${stepLink(run, blame.step)})`);
  }
  return out;
}

/** The run (a whole run file) and its task as Markdown. */
export function runMarkdown(run, task) {
  const final = run.final || {};
  const reward = typeof final.reward === "number" ? final.reward : run.steps.at(-1).total;
  const lines = [`# Run ${run.run_id}`, "", `- task: \`${run.task_id}\` ${task.title}`,
    `- policy: ${run.policy ?? "-"}; model: ${run.model ?? "-"}; status: ${run.status}`,
    `- reward: ${reward.toFixed(3)} after ${run.steps.length - 1} steps`, "",
    "## Task", "", cut(task.instruction || "", "instruction", "the task's instruction.md"), "", "## Steps", ""];
  for (const step of run.steps) lines.push(...stepSection(run, step, task));
  if (run.kind === "alerting" && task.checks.length > 0) lines.push(...failingSection(run, task));
  return `${lines.join("\n").trimEnd()}\n`;
}

/** Copy the run as Markdown to the clipboard; where the page may not write it (file://), show it selected. */
export async function copyRunMarkdown(run, task, status) {
  const text = runMarkdown(run, task);
  try {
    await navigator.clipboard.writeText(text);
    fill(status, `Copied ${formatCount(text.length)} characters of Markdown.`);
  } catch {
    const box = el("textarea", { class: "markdown-fallback", id: "copy-markdown-text", readonly: "", "aria-label": "The run as Markdown" });
    box.value = text;
    fill(status, "The browser does not let this page write the clipboard: the Markdown is below, selected; press Ctrl+C. ", box);
    box.select();
  }
  status.dataset.chars = String(text.length);
}
