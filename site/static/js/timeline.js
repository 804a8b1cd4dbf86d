// The step timeline: one button per step, coloured by the step's reward change.

import { el, clear } from "./dom.js";
import { formatDelta, formatReward, rewardTrend } from "./format.js";

function stepTitle(step) {
  const what = step.tool ? step.tool.name : step.n === 0 ? "initial state" : step.source;
  const change = step.graded ? ` \u00b7 ${formatDelta(step.reward)} \u2192 ${formatReward(step.total)}` : " \u00b7 not graded";
  return `Step ${step.n} \u00b7 ${what}${change}`;
}

/**
 * Fill the <ol> with one button per step; clicking calls onSelect(n).
 * Returns update(n), which marks step n as the current one.
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
    button.addEventListener("click", () => onSelect(step.n));
    list.append(el("li", null, button));
    return button;
  });
  return function update(current) {
    buttons.forEach((button, n) => {
      const isCurrent = n === current;
      button.classList.toggle("current", isCurrent);
      if (isCurrent) {
        button.setAttribute("aria-current", "step");
      } else {
        button.removeAttribute("aria-current");
      }
    });
  };
}
