// Long step texts: collapsed blocks expand on demand; texts the exporter moved out of the run file
// (step.lazy, docs/formats.md) load when asked for.
//
// Stable ids: #step-<field>-more (field: message, arguments, diff, output) loads the whole text;
// [data-loaded="1"] once it is shown whole. #step-<field>-expand (arguments, output) toggles
// the block's height limit (aria-expanded).

import { byId, clear, fill } from "./dom.js";
import { loadTextParts } from "./data.js";

const LONG_LINES = 30;
const LONG_CHARS = 3000;
let shownStep = null;

function isLong(text) {
  if (text.length > LONG_CHARS) return true;
  let lines = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) if (++lines > LONG_LINES) return true;
  return false;
}

function setExpand(field, text) {
  const button = byId(`step-${field}-expand`);
  const block = byId(`step-${field}`);
  const long = isLong(text);
  button.hidden = !long;
  block.classList.remove("expanded");
  button.setAttribute("aria-expanded", "false");
  if (button.textContent !== "Expand") fill(button, "Expand");
}

function wireExpand(field) {
  const button = byId(`step-${field}-expand`);
  button.addEventListener("click", () => {
    const block = byId(`step-${field}`);
    const expanded = block.classList.toggle("expanded");
    button.setAttribute("aria-expanded", expanded ? "true" : "false");
    fill(button, expanded ? "Collapse" : "Expand");
  });
}

/**
 * Wire the expand buttons once. `showWhole(field, text, step)` puts a whole text in place
 * (the detail view knows how to draw arguments and diffs).
 */
export function installLongTexts(showWhole) {
  wireExpand("arguments");
  wireExpand("output");
  for (const field of ["message", "arguments", "diff", "output"]) {
    const button = byId(`step-${field}-more`);
    button.addEventListener("click", async () => {
      const step = shownStep;
      const info = step && step.lazy && step.lazy[field];
      if (!info) return;
      button.disabled = true;
      fill(button, "Loading\u2026");
      try {
        const text = await loadTextParts(info.parts);
        if (shownStep !== step) return;
        showWhole(field, text, step);
        button.dataset.loaded = "1";
        button.hidden = true;
      } catch (error) {
        fill(button, `Could not load the whole text: ${error.message}`);
      } finally {
        button.disabled = false;
      }
    });
  }
}

/** After a step is drawn: show "Show all" for texts kept outside the run file, "Expand" for long ones. */
export function updateLongTexts(step, argumentsText, outputText) {
  shownStep = step;
  setExpand("arguments", argumentsText);
  setExpand("output", outputText);
  for (const field of ["message", "arguments", "diff", "output"]) {
    const button = byId(`step-${field}-more`);
    const info = step.lazy && step.lazy[field];
    button.hidden = !info;
    button.dataset.loaded = "0";
    if (info) fill(button, `Show all ${info.chars.toLocaleString("en")} characters (shortened here)`);
    else if (button.firstChild) clear(button);
  }
}
