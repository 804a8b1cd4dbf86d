// The step timeline: one button per step, coloured by the step's reward change.

import { el, clear } from "../lib/dom.js";
import { formatDelta, formatReward, rewardTrend } from "../lib/format.js";

function stepTitle(step) {
  const what = step.tool ? step.tool.name : step.n === 0 ? "initial state" : step.source;
  const change = step.graded ? ` \u00b7 ${formatDelta(step.reward)} \u2192 ${formatReward(step.total)}` : " \u00b7 not graded";
  return `Step ${step.n} \u00b7 ${what}${change}`;
}

/**
 * Fill the <ol> with one button per step; clicking calls onSelect(n).
 * Returns update(n), which marks step n as the current one; it touches only the previous and the
 * new current button, so a move costs the same on a run of any length.
 */
const NAMED_STEPS = 120;

/** The short name a step's button shows under its number: the tool, or what step 0 is. */
function toolLabel(step) {
  const name = step.tool ? String(step.tool.name) : step.n === 0 ? "start" : String(step.source || "");
  return name.length > 12 ? `${name.slice(0, 11)}\u2026` : name;
}

export function renderTimeline(list, steps, onSelect) {
  clear(list);
  // a run of up to NAMED_STEPS steps names each step's tool on its button; a longer one keeps
  // the numbers alone (the names are in each button's title) so the strip stays a few lines
  list.classList.toggle("named", steps.length <= NAMED_STEPS);
  const buttons = steps.map((step) => {
    const flipped = Array.isArray(step.changed) && step.changed.length > 0;
    const button = el(
      "button",
      {
        type: "button",
        class: ["step-dot", `trend-${rewardTrend(step)}`, step.diff ? "has-diff" : null, flipped ? "flipped" : null],
        title: stepTitle(step) + (flipped ? ` \u00b7 ${step.changed.length} check${step.changed.length === 1 ? "" : "s"} changed` : ""),
        "aria-label": stepTitle(step) + (flipped ? ` \u00b7 ${step.changed.length} check${step.changed.length === 1 ? "" : "s"} changed` : ""),
        dataset: { step: String(step.n), trend: rewardTrend(step), tool: step.tool ? String(step.tool.name) : "" },
      },
      String(step.n), // a text node, not an element: a long strip holds one element a step fewer
      steps.length <= NAMED_STEPS ? el("span", { class: "step-tool-label" }, toolLabel(step)) : null,
    );
    list.append(el("li", null, button));
    return button;
  });
  // one listener for every button (a listener each costs time to build and to tear down on long runs)
  list.onclick = (event) => {
    const button = event.target instanceof Element ? event.target.closest("button.step-dot") : null;
    if (button && list.contains(button)) onSelect(Number(button.dataset.step));
  };
  let current = null;
  return function update(n) {
    if (n === current) return;
    const previous = current === null ? null : buttons[current];
    if (previous) {
      previous.classList.remove("current");
      previous.removeAttribute("aria-current");
    }
    const next = buttons[n];
    if (next) {
      next.classList.add("current");
      next.setAttribute("aria-current", "step");
    }
    current = next ? n : null;
  };
}
