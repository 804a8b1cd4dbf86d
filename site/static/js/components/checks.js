// The checks panel: the task's catalog grouped by requirement, each check's state at a step.

import { el, clear, fill } from "../lib/dom.js";

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

// One item is built with el() and cloned for every check (cloning is native work); its texts
// are set as textContent, never parsed.
function checkPrototype() {
  return el(
    "li",
    { class: "check", tabindex: "0" },
    el("span", { class: "state-mark", "aria-hidden": "true" }),
    el(
      "div",
      { class: "check-body" },
      el("div", { class: "check-line" }, el("span", { class: "check-label" }), el("span", { class: "changed-mark" }, "changed")),
      el("div", { class: "check-meta" }, el("span", { class: "family" }), " ", el("code")),
      el("div", { class: "check-detail" }),
      el("div", { class: "check-cause", hidden: "" }, el("span", { class: "cause-kind" }), " ", el("span", { class: "cause-text" })),
      el("div", { class: "check-blame", hidden: "" }, el("a", { class: "blame-link" })),
    ),
  );
}

/** One requirement's group of checks; each item is recorded in `built` (items, byItem, counters). */
function buildGroup(group, prototype, built) {
  const counter = el("span", { class: "group-count" });
  built.counters.push(counter);
  const list = el("ul", { class: "check-list" });
  for (const { check, index } of group.checks) {
    const item = prototype.cloneNode(true);
    const [mark, body] = item.children;
    const [line, meta, detail, cause, blame] = body.children;
    item.setAttribute("title", check.note || "");
    item.setAttribute("data-check-id", check.id);
    item.setAttribute("data-index", String(index));
    item.setAttribute("data-family", check.family || "");
    line.firstChild.textContent = check.label || check.id;
    meta.firstChild.textContent = check.family || "";
    meta.lastChild.textContent = check.id;
    list.append(item);
    built.byItem.set(item, check.id);
    built.items.push({ item, mark, detail, cause, blame, check, index, counter, state: null, isChanged: null, detailText: null, selected: false, why: null });
  }
  return el("section", { class: "check-group", dataset: { req: group.requirement ? group.requirement.id : "" } }, el("header", null, groupHeading(group.requirement), counter), list);
}

/**
 * Clicks and Enter/Space on a check item call onSelectCheck(check id); a click on its blame link
 * calls onOpenBlame(step, hunk, check id) instead (the link's href is the same place as a permalink).
 */
function installSelection(container, byItem, onSelectCheck, onOpenBlame) {
  const itemOf = (event) => {
    const item = event.target instanceof Element ? event.target.closest("li.check") : null;
    return item && byItem.has(item) ? item : null;
  };
  container.onclick = (event) => {
    const item = itemOf(event);
    const link = event.target instanceof Element ? event.target.closest("a.blame-link") : null;
    if (item && link && onOpenBlame) {
      event.preventDefault();
      const hunk = link.dataset.hunk === "" ? null : Number(link.dataset.hunk);
      onOpenBlame(Number(link.dataset.step), hunk, byItem.get(item));
      return;
    }
    if (item) onSelectCheck(byItem.get(item));
  };
  container.onkeydown = (event) => {
    const item = itemOf(event);
    if (item && event.target === item && (event.key === "Enter" || event.key === " ")) {
      event.preventDefault();
      onSelectCheck(byItem.get(item));
    }
  };
}

/** A failing check's cause line and blame link ({cause, blame, href} from whyOf, or null). */
function updateWhy(entry, why) {
  if (entry.why === why || (why && entry.why && why.cause === entry.why.cause && why.href === entry.why.href)) return;
  entry.why = why;
  const cause = why && why.cause;
  entry.cause.hidden = !cause;
  entry.cause.firstChild.textContent = cause ? cause.kind : "";
  entry.cause.lastChild.textContent = cause ? cause.summary : "";
  entry.cause.setAttribute("data-cause-kind", cause ? cause.kind : "");
  const blame = why && why.blame;
  entry.blame.hidden = !blame;
  const link = entry.blame.firstChild;
  if (!blame) return;
  link.setAttribute("href", why.href);
  link.dataset.step = String(blame.step);
  link.dataset.hunk = blame.hunk === null || blame.hunk === undefined ? "" : String(blame.hunk);
  link.textContent = blame.step === 0
    ? "Failing from the start (the pristine repo)"
    : `Broken at step ${blame.step}${link.dataset.hunk === "" ? "" : `, hunk ${blame.hunk + 1}`}: show the change`;
}

/** Set one check item's state, changed mark, detail and selection for `step`; returns its state. */
function updateEntry(entry, step, changed, selectedCheckId, detailOf, whyOf) {
  const state = STATES[step.checks[entry.index]] || "na";
  const isChanged = changed.has(entry.index);
  const detailText = state === "fail" ? (detailOf ? detailOf(entry.check.id) : (step.failed || {})[entry.check.id] || "") : "";
  if (entry.state !== state || entry.isChanged !== isChanged || entry.detailText !== detailText) {
    entry.state = state;
    entry.isChanged = isChanged;
    entry.detailText = detailText;
    entry.item.setAttribute("data-state", state);
    entry.item.setAttribute("data-changed", isChanged ? "1" : "0");
    entry.item.setAttribute("aria-label", `${entry.check.label || entry.check.id}: ${STATE_WORDS[state]}${isChanged ? ", changed at this step" : ""}`);
    entry.mark.textContent = MARKS[state];
    entry.detail.textContent = detailText;
    entry.detail.hidden = detailText === "";
  }
  updateWhy(entry, state === "fail" && whyOf ? whyOf(entry.check.id, entry.index) : null);
  const selected = entry.check.id === selectedCheckId;
  if (entry.selected !== selected) {
    entry.selected = selected;
    entry.item.classList.toggle("selected", selected);
  }
  return state;
}

/** "passing/applicable pass" over the whole catalog, built or not. */
function catalogSummary(step) {
  let passing = 0;
  let applicable = 0;
  for (const character of step.checks) {
    if (character !== "-") applicable += 1;
    if (character === "1") passing += 1;
  }
  return step.checks ? `${passing}/${applicable} pass` : "not graded yet";
}

function noChecks(container, summary) {
  container.append(el("p", { class: "empty", id: "checks-empty" }, "This run has no check catalog (episode runs are graded by their environment's reward)."));
  const none = () => fill(summary, "");
  none.finish = () => {};
  return none;
}

/**
 * Build the panel (groups and one <li> per check) and return update(step, selectedCheckId,
 * detailOf, whyOf), which sets each check's state for that step (whyOf(id, index): a failing
 * check's {cause, blame, href} or null); onSelectCheck(id) is called when a check is clicked,
 * onOpenBlame(step, hunk, id) when its blame link is. With `firstChecks`, only the groups holding the first that many checks are built
 * now (enough to fill the screen before the first paint); update.finish() builds the others (and
 * applies the last update to them). Without it everything is built at once.
 */
export function renderChecks(container, summary, task, onSelectCheck, firstChecks = Infinity, onOpenBlame = null) {
  clear(container);
  const legend = document.getElementById("checks-legend");
  if (legend) legend.hidden = task.checks.length === 0;
  if (task.checks.length === 0) return noChecks(container, summary);
  const prototype = checkPrototype();
  const built = { items: [], byItem: new Map(), counters: [] };
  const pending = groupChecks(task);
  function build(limit) {
    const fragment = document.createDocumentFragment();
    while (pending.length > 0 && built.items.length < limit) fragment.append(buildGroup(pending.shift(), prototype, built));
    container.append(fragment);
  }
  build(firstChecks);
  installSelection(container, built.byItem, onSelectCheck, onOpenBlame);

  let last = null;
  function update(step, selectedCheckId, detailOf, whyOf) {
    last = [step, selectedCheckId, detailOf, whyOf];
    const changed = new Set(step.changed);
    const counts = new Map(built.counters.map((counter) => [counter, { pass: 0, applicable: 0 }]));
    for (const entry of built.items) {
      const state = updateEntry(entry, step, changed, selectedCheckId, detailOf, whyOf);
      const count = counts.get(entry.counter);
      if (state !== "na") count.applicable += 1;
      if (state === "pass") count.pass += 1;
    }
    for (const [counter, count] of counts) {
      const text = `${count.pass}/${count.applicable}`;
      if (counter.textContent !== text) counter.textContent = text;
    }
    fill(summary, catalogSummary(step));
  }
  update.finish = () => {
    if (pending.length === 0) return;
    build(Infinity);
    if (last) update(...last);
  };
  return update;
}
