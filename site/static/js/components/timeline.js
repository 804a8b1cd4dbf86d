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
export function renderTimeline(list, steps, onSelect) {
  clear(list);
  const buttons = steps.map((step) => {
    const button = el(
      "button",
      {
        type: "button",
        class: ["step-dot", `trend-${rewardTrend(step)}`, step.diff ? "has-diff" : null],
        title: stepTitle(step),
        "aria-label": stepTitle(step),
        dataset: { step: String(step.n), trend: rewardTrend(step) },
      },
      String(step.n),
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
