// The checks panel: the task's catalog grouped by requirement, each check's state at a step.

import { el, clear, fill } from "./dom.js";

const STATES = { 1: "pass", 0: "fail", "-": "na" };
const MARKS = { pass: "\u2713", fail: "\u2717", na: "\u2013" };
const STATE_WORDS = { pass: "passes", fail: "fails", na: "not applicable" };

function groupChecks(task) {
  const groups = new Map();
  for (const requirement of task.requirements) groups.set(requirement.id, { requirement, checks: [] });
  const general = { requirement: null, checks: [] };
  task.checks.forEach((check, index) => {
    const entry = { check, index };
    if (check.req === null || check.req === undefined) {
      general.checks.push(entry);
      return;
    }
    if (!groups.has(check.req)) groups.set(check.req, { requirement: { id: check.req, title: "", kind: "", weight: null }, checks: [] });
    groups.get(check.req).checks.push(entry);
  });
  const ordered = [...groups.values()].filter((group) => group.checks.length > 0);
  if (general.checks.length > 0) ordered.push(general);
  return ordered;
}

function groupHeading(requirement) {
  if (!requirement) return el("h3", null, el("span", { class: "req-id" }, "General"), " ", el("span", { class: "req-title" }, "checks not tied to one requirement"));
  return el(
    "h3",
    null,
    el("span", { class: "req-id" }, requirement.id),
    " ",
    el("span", { class: "req-title" }, requirement.title || ""),
    requirement.kind ? el("span", { class: "tag" }, `${requirement.kind}${requirement.weight !== null && requirement.weight !== undefined ? ` \u00b7 w${requirement.weight}` : ""}`) : null,
  );
}

/**
 * Build the static part of the panel (groups and one <li> per check) and return
 * update(step, selectedCheckId), which sets each check's state for that step.
 * onSelectCheck(id) is called when a check is clicked.
 */
export function renderChecks(container, summary, task, onSelectCheck) {
  clear(container);
  const legend = document.getElementById("checks-legend");
  if (legend) legend.hidden = task.checks.length === 0;
  if (task.checks.length === 0) {
    container.append(el("p", { class: "empty", id: "checks-empty" }, "This run has no check catalog (episode runs are graded by their environment's reward)."));
    return () => fill(summary, "");
  }
  const items = [];
  for (const group of groupChecks(task)) {
    const counter = el("span", { class: "group-count" });
    const list = el("ul", { class: "check-list" });
    for (const { check, index } of group.checks) {
      const mark = el("span", { class: "state-mark", "aria-hidden": "true" });
      const detail = el("div", { class: "check-detail" });
      const changed = el("span", { class: "changed-mark" }, "changed");
      const item = el(
        "li",
        {
          class: "check",
          tabindex: "0",
          title: check.note || "",
          dataset: { checkId: check.id, index: String(index), family: check.family || "" },
        },
        mark,
        el(
          "div",
          { class: "check-body" },
          el("div", { class: "check-line" }, el("span", { class: "check-label" }, check.label || check.id), changed),
          el("div", { class: "check-meta" }, el("span", { class: "family" }, check.family || ""), " ", el("code", null, check.id)),
          detail,
        ),
      );
      item.addEventListener("click", () => onSelectCheck(check.id));
      item.addEventListener("keydown", (event) => {
        if (event.key === "Enter" || event.key === " ") {
          event.preventDefault();
          onSelectCheck(check.id);
        }
      });
      list.append(item);
      items.push({ item, mark, detail, changed, check, index, counter });
    }
    container.append(el("section", { class: "check-group", dataset: { req: group.requirement ? group.requirement.id : "" } }, el("header", null, groupHeading(group.requirement), counter), list));
  }

  let shownSelected = null;
  return function update(step, selectedCheckId, detailOf) {
    const changed = new Set(step.changed);
    const counts = new Map();
    let passing = 0;
    let applicable = 0;
    for (const entry of items) {
      const state = STATES[step.checks[entry.index]] || "na";
      const isChanged = changed.has(entry.index);
      const detailText = state === "fail" ? (detailOf ? detailOf(entry.check.id) : (step.failed || {})[entry.check.id] || "") : "";
      if (entry.state !== state || entry.isChanged !== isChanged || entry.detailText !== detailText) {
        entry.state = state;
        entry.isChanged = isChanged;
        entry.detailText = detailText;
        entry.item.dataset.state = state;
        entry.item.dataset.changed = isChanged ? "1" : "0";
        entry.item.setAttribute("aria-label", `${entry.check.label || entry.check.id}: ${STATE_WORDS[state]}${isChanged ? ", changed at this step" : ""}`);
        fill(entry.mark, MARKS[state]);
        fill(entry.detail, detailText);
        entry.detail.hidden = detailText === "";
      }
      if (shownSelected !== selectedCheckId) entry.item.classList.toggle("selected", entry.check.id === selectedCheckId);
      const count = counts.get(entry.counter) || { pass: 0, applicable: 0 };
      if (state !== "na") count.applicable += 1;
      if (state === "pass") count.pass += 1;
      counts.set(entry.counter, count);
      if (state !== "na") applicable += 1;
      if (state === "pass") passing += 1;
    }
    shownSelected = selectedCheckId;
    for (const [counter, count] of counts) {
      const text = `${count.pass}/${count.applicable}`;
      if (counter.textContent !== text) fill(counter, text);
    }
    fill(summary, step.checks ? `${passing}/${applicable} pass` : "not graded yet");
  };
}
