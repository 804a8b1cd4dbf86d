// Search within a run: tool names, arguments, outputs and messages, case-insensitive substring.
//
// Stable ids: #run-search (the query), #run-search-form (Enter / #run-search-next: next match after
// the step shown), #run-search-count ("3 steps match"), #run-search-results li[data-step] (a snippet
// each), #run-search-full (load the texts the exporter shortened, then search them whole);
// timeline buttons of matching steps get the class "match".

import { byId, el, fill, clear } from "../lib/dom.js";
import { loadTextParts } from "../lib/data.js";

const MAX_RESULTS = 100;

function stepText(step, whole) {
  const parts = [];
  if (step.tool) {
    parts.push(step.tool.name, whole.arguments ?? JSON.stringify(step.tool.arguments));
  }
  parts.push(whole.output ?? step.output ?? "", whole.message ?? step.message ?? "");
  return parts.join("\n");
}

/** Step n's text around the first match of needle, on one line. */
function snippet(text, needle) {
  const at = text.toLowerCase().indexOf(needle);
  const start = Math.max(0, at - 40);
  return `${start > 0 ? "\u2026" : ""}${text.slice(start, at + needle.length + 60).replace(/\s+/g, " ")}`;
}

/** Load every text the exporter shortened into wholeTexts[n][field]. */
async function loadWholeTexts(run, wholeTexts) {
  await Promise.all(
    run.steps.flatMap((step, n) =>
      Object.entries(step.lazy || {}).map(async ([field, info]) => {
        wholeTexts[n][field] = await loadTextParts(info.parts);
      }),
    ),
  );
}

/** Wire the search box for run; `current()` gives the step shown, `show(n)` moves there. */
export function installRunSearch(run, current, show) {
  const input = byId("run-search");
  const wholeTexts = run.steps.map(() => ({}));
  let haystacks = null;
  let matches = [];
  const lazyCount = run.steps.reduce((sum, step) => sum + Object.keys(step.lazy || {}).length, 0);
  const fullButton = byId("run-search-full");

  function haystack(n) {
    if (!haystacks) haystacks = run.steps.map((step, i) => stepText(step, wholeTexts[i]).toLowerCase());
    return haystacks[n];
  }

  function run_query() {
    const needle = input.value.trim().toLowerCase();
    for (const button of document.querySelectorAll("#timeline button.match")) button.classList.remove("match");
    const results = clear(byId("run-search-results"));
    matches = [];
    if (!needle) {
      fill(byId("run-search-count"), "");
      fullButton.hidden = true;
      return;
    }
    run.steps.forEach((_, n) => {
      if (haystack(n).includes(needle)) matches.push(n);
    });
    fill(byId("run-search-count"), `${matches.length} step${matches.length === 1 ? "" : "s"} match`);
    for (const n of matches) {
      const dot = document.querySelector(`#timeline button[data-step="${n}"]`);
      if (dot) dot.classList.add("match");
    }
    for (const n of matches.slice(0, MAX_RESULTS)) {
      const item = el("li", { dataset: { step: String(n) } }, el("button", { type: "button", class: "link-button" }, `Step ${n}`), " ", el("span", { class: "muted" }, snippet(stepText(run.steps[n], wholeTexts[n]), needle)));
      item.querySelector("button").addEventListener("click", () => show(n));
      results.append(item);
    }
    fullButton.hidden = lazyCount === 0 || fullButton.dataset.loaded === "1";
    if (!fullButton.hidden) fill(fullButton, `Also search the ${lazyCount} shortened text${lazyCount === 1 ? "" : "s"} whole`);
  }

  let typing = null;
  input.addEventListener("input", () => {
    clearTimeout(typing);
    typing = setTimeout(run_query, 120);
  });
  byId("run-search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    run_query();
    if (matches.length === 0) return;
    const next = matches.find((n) => n > current()) ?? matches[0];
    show(next);
  });
  fullButton.addEventListener("click", async () => {
    fullButton.disabled = true;
    fill(fullButton, "Loading\u2026");
    try {
      await loadWholeTexts(run, wholeTexts);
      haystacks = null;
      fullButton.dataset.loaded = "1";
      run_query();
    } catch (error) {
      fill(fullButton, `Could not load: ${error.message}`);
    } finally {
      fullButton.disabled = false;
    }
  });
  return () => input.focus();
}
