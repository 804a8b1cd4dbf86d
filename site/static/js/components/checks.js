// The checks panel: the task's catalog grouped by requirement, each check's state at a step.

import { el, clear, fill } from "../lib/dom.js";
import { clip } from "../lib/format.js";
import { failureRoots, sharedRoots } from "../lib/roots.js";

// the longest detail or cause line the panel shows (lib/format.js clip; the inspector shows more)
const PANEL_TEXT = 600;

const STATES = { 1: "pass", 0: "fail", "-": "na" };
const MARKS = { pass: "\u2713", fail: "\u2717", na: "\u2013" };
const STATE_WORDS = { pass: "passes", fail: "fails", na: "not applicable" };

// A catalog is a task file ({requirements, checks[], panel[]}) or a run head's task
// ({requirements, check_count, checks[{index, ...}], panel[]: the first groups}); its `panel`
// lists the groups in the order they are drawn, made by the exporter alone
// (exporter/site_data.py panel_groups: catalog order grouped by requirement, then requirement
// ids the catalog names but does not list, then the checks tied to no requirement).

function checkCount(catalog) {
  return Number.isInteger(catalog.check_count) ? catalog.check_count : catalog.checks.length;
}

/** The check at catalog index `index` of a task file or a head's task. */
function checksByIndex(catalog) {
  if (!Number.isInteger(catalog.check_count)) return (index) => catalog.checks[index];
  const byIndex = new Map(catalog.checks.map((check) => [check.index, check]));
  return (index) => byIndex.get(index);
}

/** Panel groups `groups` as [{requirement, checks: [{check, index}]}] (requirement null: general). */
function resolveGroups(catalog, groups) {
  const requirements = new Map(catalog.requirements.map((requirement) => [requirement.id, requirement]));
  const checkAt = checksByIndex(catalog);
  return groups.map((group) => ({
    requirement: group.req === null ? null : requirements.get(group.req) || { id: group.req, title: "", kind: "", weight: null },
    checks: group.checks.map((index) => {
      const check = checkAt(index);
      if (!check) throw new Error(`the task's checks panel names check ${index}, which its catalog does not hold`);
      return { check, index };
    }),
  }));
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
  entry.cause.firstChild.textContent = cause ? clip(cause.kind, 80) : "";
  entry.cause.lastChild.textContent = cause ? clip(cause.summary, PANEL_TEXT) : "";
  entry.cause.setAttribute("data-cause-kind", cause ? clip(cause.kind, 80) : "");
  const blame = why && why.blame;
  entry.blame.hidden = !blame;
  const link = entry.blame.firstChild;
  if (!blame) return;
  link.setAttribute("href", why.href);
  link.dataset.step = String(blame.step);
  link.dataset.hunk = blame.hunk === null || blame.hunk === undefined ? "" : String(blame.hunk);
  link.textContent = blameText(blame);
}

/** The words of a blame link for {step, hunk} (the checks panel's and the inspector's). */
export function blameText(blame) {
  if (blame.step === 0) return "Failing from the start (the pristine repo)";
  const hunk = blame.hunk === null || blame.hunk === undefined ? "" : `, hunk ${blame.hunk + 1}`;
  return `Broken at step ${blame.step}${hunk}: show the change`;
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
    entry.detail.textContent = clip(detailText, PANEL_TEXT);
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
 * Build the panel (groups and one <li> per check) of `catalog` (a task file, or a run head's task
 * with only the first groups: see above) and return update(step, selectedCheckId, detailOf,
 * whyOf), which sets each check's state for that step (whyOf(id, index): a failing check's
 * {cause, blame, href} or null); onSelectCheck(id) is called when a check is clicked,
 * onOpenBlame(step, hunk, id) when its blame link is. update.finish(task) takes the whole task
 * file: it builds the groups the head did not hold (and applies the last update to them) and
 * gives the rows built from the head their notes; it throws when the task file does not start
 * with the head's groups (the two files come from different exports).
 */
export function renderChecks(container, summary, catalog, onSelectCheck, onOpenBlame = null) {
  clear(container);
  const legend = document.getElementById("checks-legend");
  if (legend) legend.hidden = checkCount(catalog) === 0;
  if (checkCount(catalog) === 0) return noChecks(container, summary);
  const prototype = checkPrototype();
  const built = { items: [], byItem: new Map(), counters: [] };
  const groupsBuilt = catalog.panel.length;
  function build(groups) {
    const fragment = document.createDocumentFragment();
    for (const group of groups) fragment.append(buildGroup(group, prototype, built));
    container.append(fragment);
  }
  build(resolveGroups(catalog, catalog.panel));
  installSelection(container, built.byItem, onSelectCheck, onOpenBlame);
  const filter = installFilter(container, catalog);

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
    filter.update(step, built.items);
  }
  let finished = !Number.isInteger(catalog.check_count); // a task file is whole already
  update.finish = (task) => {
    if (finished) return;
    finished = true;
    for (const entry of built.items) {
      const check = task.checks[entry.index];
      if (!check || check.id !== entry.check.id) throw new Error(`the run head and the task file list other checks (${entry.check.id}). Export the site again.`);
      entry.check = check;
      entry.item.setAttribute("title", check.note || "");
    }
    build(resolveGroups(task, task.panel.slice(groupsBuilt)));
    filter.requirements(task);
    if (last) update(...last);
  };
  return update;
}

const FLIPS_NAMED = 6;

/** Mark each failing item with its root and list the roots two or more checks share. */
function markRoots(items, container) {
  const failing = items.filter((entry) => entry.state === "fail");
  const roots = failureRoots(failing.map((entry) => ({ id: entry.check.id, cause: entry.why && entry.why.cause })));
  for (const entry of items) entry.item.dataset.root = (entry.state === "fail" && roots.get(entry.check.id)) || "";
  const shared = sharedRoots(roots);
  const box = document.getElementById("checks-roots");
  const list = document.getElementById("checks-roots-list");
  if (!box || !list) return;
  box.hidden = shared.length === 0;
  const chosen = container.dataset.show === "root" ? container.dataset.root : null;
  fill(list, shared.map(([root, count]) => el("button", { type: "button", class: "button root-button", dataset: { root },
    "aria-pressed": root === chosen ? "true" : "false" }, `${root} \u00b7 ${count} checks`)));
  for (const section of container.querySelectorAll("section.check-group")) {
    section.dataset.rootCount = String(section.querySelectorAll(`li.check[data-root="${CSS.escape(chosen || "")}"]`).length);
  }
}

/** Per group, the failing and changed checks; the checks that turned red and green; the totals. */
function tally(items) {
  const perGroup = new Map();
  const turned = { red: [], green: [] };
  let failing = 0;
  let changed = 0;
  for (const entry of items) {
    const group = entry.item.closest("section.check-group");
    const count = perGroup.get(group) || { fail: 0, changed: 0 };
    if (entry.state === "fail") count.fail += 1;
    if (entry.isChanged) count.changed += 1;
    perGroup.set(group, count);
    failing += entry.state === "fail" ? 1 : 0;
    changed += entry.isChanged ? 1 : 0;
    if (entry.isChanged && entry.state === "fail") turned.red.push(entry.check.id);
    if (entry.isChanged && entry.state === "pass") turned.green.push(entry.check.id);
  }
  return { perGroup, turned, failing, changed };
}

/**
 * The filter above the groups (#checks-filter: all, failing, changed at this step; a
 * requirement) and the line saying which checks flipped at the step (#checks-flips). Returns
 * {update(step, items), requirements(task)}: update marks each group with its failing and
 * changed counts (CSS hides what the filter leaves out) and writes the counts and the flips.
 */
function installFilter(container, catalog) {
  const bar = document.getElementById("checks-filter");
  const select = document.getElementById("checks-req");
  const flips = document.getElementById("checks-flips");
  if (!bar || !select || !flips) return { update: () => {}, requirements: () => {} };
  const requirements = (source) => {
    const known = new Set([...select.options].map((option) => option.value));
    for (const requirement of source.requirements || []) {
      if (known.has(requirement.id)) continue;
      select.append(el("option", { value: requirement.id }, `${requirement.id} ${requirement.title || ""}`.trim()));
    }
  };
  requirements(catalog);
  const apply = () => {
    const wanted = select.value;
    const root = container.dataset.show === "root" ? container.dataset.root : null;
    for (const group of container.querySelectorAll("section.check-group")) group.hidden = wanted !== "" && group.dataset.req !== wanted;
    for (const item of container.querySelectorAll("li.check")) item.classList.toggle("root-out", root !== null && item.dataset.root !== root);
  };
  let lastItems = [];
  const press = (show) => {
    for (const other of bar.querySelectorAll("button[data-show]")) other.setAttribute("aria-pressed", other.dataset.show === show ? "true" : "false");
  };
  bar.onclick = (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-show]") : null;
    if (!button) return;
    container.dataset.show = button.dataset.show;
    delete container.dataset.root;
    press(button.dataset.show);
    markRoots(lastItems, container);
  };
  const roots = document.getElementById("checks-roots-list");
  if (roots) roots.onclick = (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-root]") : null;
    if (!button) return;
    const again = container.dataset.show === "root" && container.dataset.root === button.dataset.root;
    container.dataset.show = again ? "all" : "root";
    if (again) delete container.dataset.root;
    else container.dataset.root = button.dataset.root;
    press(container.dataset.show);
    markRoots(lastItems, container);
    apply();
  };
  select.onchange = apply;
  return {
    requirements: (task) => {
      requirements(task);
      apply();
    },
    update(step, items) {
      const { perGroup, turned, failing, changed } = tally(items);
      for (const [group, count] of perGroup) {
        group.dataset.fails = String(count.fail);
        group.dataset.changed = String(count.changed);
      }
      fill(document.getElementById("checks-fail-count"), String(failing));
      fill(document.getElementById("checks-changed-count"), String(changed));
      const named = (ids) => ids.slice(0, FLIPS_NAMED).join(", ") + (ids.length > FLIPS_NAMED ? ` and ${ids.length - FLIPS_NAMED} more` : "");
      const parts = [];
      if (turned.red.length) parts.push(`${turned.red.length} turned red (${named(turned.red)})`);
      if (turned.green.length) parts.push(`${turned.green.length} turned green (${named(turned.green)})`);
      fill(flips, parts.length ? `At this step ${parts.join("; ")}.` : step.graded ? "No check flipped at this step." : "");
      lastItems = items;
      markRoots(items, container);
      apply();
    },
  };
}
