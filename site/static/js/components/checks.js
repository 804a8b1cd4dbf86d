// The checks panel: the task's catalog grouped by requirement, each check's state at a step.
//
// Light on long catalogs: every group's heading and counts are drawn, but a check's row only when
// it is on screen or soon will be. The first EAGER_ROWS rows (in panel order) are drawn at once
// (the first screens of the panel, which the first paint shows); the rest of a group waits behind
// a placeholder li.check-more of about its height, and an IntersectionObserver draws the next
// CHUNK_ROWS when the placeholder comes within a screen of the viewport. The selected check's row
// (a deep link's &check=, a matrix click) and every group a filter shows are drawn at once. Why
// rows and not content-visibility: the rows not drawn are not in the DOM at all (every element
// counts in style and layout of a step switch), while counts, flips and roots are computed over
// the whole catalog, so a filter or a deep link behaves as if everything were drawn.

import { el, clear, fill } from "../lib/dom.js";
import { clip } from "../lib/format.js";
import { installFilter } from "./checks-filter.js";

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
// are set as textContent, never parsed. A failing check's cause and blame lines are added the
// first time it has one (whyParts).
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
    ),
  );
}

function whyParts(entry) {
  if (entry.cause) return;
  entry.cause = el("div", { class: "check-cause", hidden: "" }, el("span", { class: "cause-kind" }), " ", el("span", { class: "cause-text" }));
  entry.blame = el("div", { class: "check-blame", hidden: "" }, el("a", { class: "blame-link" }));
  entry.item.lastChild.append(entry.cause, entry.blame);
}

const EAGER_ROWS = 24;
// At the first draw, no more rows than a window's height of them (the panel starts below the step
// controls, so that is past the bottom of the first screen; the placeholder's observer draws the
// next ones after the first frame): every row drawn before it is styled and laid out in that frame.
// The browser window's outer height (its toolbars too: a row or two more than the page shows),
// not innerHeight: reading innerHeight (or visualViewport.height) forces a style and layout of the
// page, which, mid-draw, the next frame did again (about 4 ms of the run view's first step, traced:
// bench/viewer.py's settled figure). Read once, when this module is first evaluated.
const WINDOW_HEIGHT = window.outerHeight || window.innerHeight || 0;
const firstRows = () => Math.max(8, Math.min(EAGER_ROWS, Math.ceil(WINDOW_HEIGHT / ROW_ESTIMATE)));
const CHUNK_ROWS = 25;
const ROW_ESTIMATE = 60; // px a row takes, about (the placeholder's height per row not drawn)

/** One requirement's group: its section, heading and counter; no rows yet (see buildRows). */
function groupSection(group) {
  const counter = el("span", { class: "group-count" });
  const list = el("ul", { class: "check-list" });
  const section = el("section", { class: "check-group", dataset: { req: group.requirement ? group.requirement.id : "" } }, el("header", null, groupHeading(group.requirement), counter), list);
  return { ...group, section, list, counter, done: 0, more: null, fails: 0, changedCount: 0, rootCount: 0 };
}

/** Rows `from`..`to` (exclusive) of `group` as entries (the panel's items, byItem). */
function buildRows(group, from, to, prototype, built) {
  const fragment = document.createDocumentFragment();
  const made = [];
  for (const { check, index } of group.checks.slice(from, to)) {
    const item = prototype.cloneNode(true);
    const [mark, body] = item.children;
    const [line, meta, detail] = body.children;
    item.setAttribute("title", check.note || "");
    item.setAttribute("data-check-id", check.id);
    item.setAttribute("data-index", String(index));
    item.setAttribute("data-family", check.family || "");
    line.firstChild.textContent = check.label || check.id;
    meta.firstChild.textContent = check.family || "";
    meta.lastChild.textContent = check.id;
    fragment.append(item);
    built.byItem.set(item, check.id);
    made.push({ item, mark, detail, cause: null, blame: null, check, index, group, state: null, isChanged: null, detailText: null, selected: false, why: null });
  }
  group.list.insertBefore(fragment, group.more);
  return made;
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
  if (why) whyParts(entry);
  if (!entry.cause) return;
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

/** Set one check item's state, changed mark, detail, cause and selection from the panel's step. */
function updateEntry(entry, view) {
  const state = view.state(entry.index);
  const isChanged = view.changed.has(entry.index);
  const detailText = state === "fail" ? view.detail(entry.check.id) : "";
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
  updateWhy(entry, state === "fail" ? view.why(entry.index, entry.check.id) : null);
  const selected = entry.check.id === view.selected;
  if (entry.selected !== selected) {
    entry.selected = selected;
    entry.item.classList.toggle("selected", selected);
  }
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
 * The panel's rows as they come: `panel` = {groups, entries, byItem, build(group, upTo),
 * draw(upTo)}; build draws the group's rows up to `upTo` (and a placeholder for the others),
 * draw the first `upTo` rows of the panel; `onBuilt(entries)` is told of every new row.
 */
function windowedRows(panel, prototype, onBuilt) {
  const observer = typeof IntersectionObserver === "function" ? new IntersectionObserver((seen) => {
    for (const record of seen) {
      const group = record.isIntersecting ? panel.groups.find((g) => g.more === record.target) : null;
      if (group) panel.build(group, group.done + CHUNK_ROWS);
    }
  }, { rootMargin: "100% 0px" }) : null;
  const placeholder = (group) => {
    const left = group.checks.length - group.done;
    if (!group.more && left > 0) group.more = group.list.appendChild(el("li", { class: "check-more", "aria-hidden": "true" }));
    if (!group.more) return;
    observer.unobserve(group.more);
    if (left === 0) {
      group.more.remove();
      group.more = null;
      return;
    }
    group.more.style.height = `${left * ROW_ESTIMATE}px`;
    observer.observe(group.more); // observed again: told at once if it is still in reach
  };
  panel.build = (group, upTo) => {
    const to = observer ? Math.min(upTo, group.checks.length) : group.checks.length; // no observer: every row
    if (to <= group.done && (group.more || group.done === group.checks.length)) return;
    const made = to > group.done ? buildRows(group, group.done, to, prototype, panel) : [];
    group.done = Math.max(group.done, to);
    panel.entries.push(...made);
    placeholder(group);
    if (made.length) onBuilt(made);
  };
  panel.draw = (upTo) => {
    let left = upTo;
    for (const group of panel.groups) {
      panel.build(group, Math.max(left, 0));
      left -= group.checks.length;
    }
  };
}

/** Draw the row of `checkId` (and those before it in its group) when it is not drawn yet. */
function drawCheck(panel, checkId) {
  if (!checkId || panel.entries.some((entry) => entry.check.id === checkId)) return;
  for (const group of panel.groups) {
    const at = group.checks.findIndex(({ check }) => check.id === checkId);
    if (at >= 0) panel.build(group, at + 1);
  }
}

/** The step's view the rows are drawn from: state, changed, detail and why by catalog index. */
function stepView(step, selectedCheckId, detailOf, whyOf) {
  const whys = new Map();
  return {
    step,
    selected: selectedCheckId,
    changed: new Set(step.changed),
    state: (index) => STATES[step.checks[index]] || "na",
    detail: (checkId) => (detailOf ? detailOf(checkId) : (step.failed || {})[checkId] || ""),
    why: (index, checkId) => {
      if (!whyOf) return null;
      if (!whys.has(index)) whys.set(index, whyOf(checkId, index));
      return whys.get(index);
    },
  };
}

/**
 * Build the panel (groups, and rows as they come into reach: see the top) of `catalog` (a task
 * file, or a run head's task with only the first groups: see above) and return update(step,
 * selectedCheckId, detailOf, whyOf), which sets each check's state for that step (whyOf(id,
 * index): a failing check's {cause, blame, href} or null); onSelectCheck(id) is called when a
 * check is clicked, onOpenBlame(step, hunk, id) when its blame link is. update.finish(task)
 * takes the whole task file: it adds the groups the head did not hold and gives the rows drawn
 * from the head their notes; it throws when the task file does not start with the head's groups
 * (the two files come from different exports).
 */
export function renderChecks(container, summary, catalog, onSelectCheck, onOpenBlame = null) {
  // a run's own page wrote rows of its first step (exporter/run_page.py): as many are drawn
  // again, so the panel keeps its height when the view draws over them
  const written = container.querySelectorAll("li.check").length;
  clear(container);
  const legend = document.getElementById("checks-legend");
  if (legend) legend.hidden = checkCount(catalog) === 0;
  if (checkCount(catalog) === 0) return noChecks(container, summary);
  const panel = { groups: [], entries: [], byItem: new Map(), state: () => "na", changed: new Set(), why: () => null };
  let view = null;
  windowedRows(panel, checkPrototype(), (made) => {
    if (!view) return;
    for (const entry of made) updateEntry(entry, view);
    filter.decorate(made);
  });
  const addGroups = (groups) => {
    const sections = groups.map(groupSection);
    panel.groups.push(...sections);
    container.append(...sections.map((group) => group.section));
  };
  addGroups(resolveGroups(catalog, catalog.panel));
  const groupsBuilt = catalog.panel.length;
  installSelection(container, panel.byItem, onSelectCheck, onOpenBlame);
  const filter = installFilter(container, panel, catalog);
  panel.draw(Math.max(firstRows(), written));

  let last = null;
  function update(step, selectedCheckId, detailOf, whyOf) {
    last = [step, selectedCheckId, detailOf, whyOf];
    view = stepView(step, selectedCheckId, detailOf, whyOf);
    Object.assign(panel, { state: view.state, changed: view.changed, why: view.why });
    drawCheck(panel, selectedCheckId);
    for (const entry of panel.entries) updateEntry(entry, view);
    for (const group of panel.groups) {
      let pass = 0;
      let applicable = 0;
      for (const { index } of group.checks) {
        const state = view.state(index);
        if (state !== "na") applicable += 1;
        if (state === "pass") pass += 1;
      }
      const text = `${pass}/${applicable}`;
      if (group.counter.textContent !== text) group.counter.textContent = text;
    }
    fill(summary, catalogSummary(step));
    filter.update(step);
  }
  let finished = !Number.isInteger(catalog.check_count); // a task file is whole already
  update.finish = (task) => {
    if (finished) return;
    finished = true;
    for (const group of panel.groups) {
      group.checks = group.checks.map(({ check, index }) => {
        const whole = task.checks[index];
        if (!whole || whole.id !== check.id) throw new Error(`the run head and the task file list other checks (${check.id}). Export the site again.`);
        return { check: whole, index };
      });
    }
    for (const entry of panel.entries) {
      entry.check = task.checks[entry.index];
      entry.item.setAttribute("title", entry.check.note || "");
    }
    addGroups(resolveGroups(task, task.panel.slice(groupsBuilt)));
    panel.draw(EAGER_ROWS);
    filter.requirements(task);
    if (last) update(...last);
  };
  return update;
}
