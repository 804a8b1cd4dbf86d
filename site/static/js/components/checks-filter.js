// The checks panel's filter (all, failing, changed at this step, one requirement, one root) and the
// line saying which checks flipped at the step; components/checks.js draws the panel.

import { el, fill } from "../lib/dom.js";
import { failureRoots, sharedRoots } from "../lib/roots.js";

const FLIPS_NAMED = 6;

/**
 * Per group, the failing and changed checks and the checks with root `chosen`; the checks that
 * turned red and green. Over every check of the panel's groups, drawn or not
 * (`panel.state(index)`: "pass", "fail" or "na"; `panel.changed`: a Set of indexes).
 */
function tally(panel, roots, chosen) {
  const turned = { red: [], green: [] };
  for (const group of panel.groups) {
    group.fails = 0;
    group.changedCount = 0;
    group.rootCount = 0;
    for (const { check, index } of group.checks) {
      const state = panel.state(index);
      const isChanged = panel.changed.has(index);
      if (state === "fail") group.fails += 1;
      if (isChanged) group.changedCount += 1;
      if (chosen !== null && state === "fail" && roots.get(check.id) === chosen) group.rootCount += 1;
      if (isChanged && state === "fail") turned.red.push(check.id);
      if (isChanged && state === "pass") turned.green.push(check.id);
    }
  }
  return { turned };
}

/** How many times `state` ("0": failing) is in a step's `checks` string (one state per check). */
function countOf(checks, state) {
  let count = 0;
  for (const value of checks) if (value === state) count += 1;
  return count;
}

/** The roots of the step's failing checks (lib/roots.js): Map check id -> root. */
function stepRoots(panel) {
  const failing = [];
  for (const group of panel.groups) {
    for (const { check, index } of group.checks) {
      if (panel.state(index) !== "fail") continue;
      const why = panel.why(index, check.id);
      failing.push({ id: check.id, cause: why && why.cause });
    }
  }
  return failureRoots(failing);
}

function flipsText(step, turned) {
  const named = (ids) => ids.slice(0, FLIPS_NAMED).join(", ") + (ids.length > FLIPS_NAMED ? ` and ${ids.length - FLIPS_NAMED} more` : "");
  const parts = [];
  if (turned.red.length) parts.push(`${turned.red.length} turned red (${named(turned.red)})`);
  if (turned.green.length) parts.push(`${turned.green.length} turned green (${named(turned.green)})`);
  return parts.length ? `At this step ${parts.join("; ")}.` : step.graded ? "No check flipped at this step." : "";
}

/** The "Failing together" buttons: the roots two or more failing checks share. */
function fillRoots(roots, chosen) {
  const box = document.getElementById("checks-roots");
  const list = document.getElementById("checks-roots-list");
  if (!box || !list) return;
  const shared = sharedRoots(roots);
  box.hidden = shared.length === 0;
  fill(list, shared.map(([root, count]) => el("button", { type: "button", class: "button root-button", dataset: { root },
    "aria-pressed": root === chosen ? "true" : "false" }, `${root} \u00b7 ${count} checks`)));
}

/**
 * The filter's buttons: All, Failing, Changed (bar) and the roots' (#checks-roots-list) set
 * container.dataset.show (and .root), then call changed().
 */
function wireButtons(container, bar, changed) {
  const press = (show) => {
    for (const other of bar.querySelectorAll("button[data-show]")) other.setAttribute("aria-pressed", other.dataset.show === show ? "true" : "false");
  };
  bar.onclick = (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-show]") : null;
    if (!button) return;
    container.dataset.show = button.dataset.show;
    delete container.dataset.root;
    press(button.dataset.show);
    changed();
  };
  const rootList = document.getElementById("checks-roots-list");
  if (rootList) rootList.onclick = (event) => {
    const button = event.target instanceof Element ? event.target.closest("button[data-root]") : null;
    if (!button) return;
    const again = container.dataset.show === "root" && container.dataset.root === button.dataset.root;
    container.dataset.show = again ? "all" : "root";
    if (again) delete container.dataset.root;
    else container.dataset.root = button.dataset.root;
    press(container.dataset.show);
    changed();
  };
}

/**
 * Install the filter above the groups (#checks-filter, #checks-req, #checks-roots) and the flips
 * line (#checks-flips) on `panel` (components/checks.js: groups, state, why, changed, build,
 * entries). Returns {update(step), requirements(source), decorate(entries)}: update writes the
 * counts, flips and roots for the step panel holds and builds the groups a filter shows;
 * decorate gives newly drawn entries their root (CSS hides what the filter leaves out).
 */
export function installFilter(container, panel, catalog) {
  const bar = document.getElementById("checks-filter");
  const select = document.getElementById("checks-req");
  const flips = document.getElementById("checks-flips");
  if (!bar || !select || !flips) return { update: () => {}, requirements: () => {}, decorate: () => {} };
  let roots = new Map();
  let lastStep = null;
  const requirements = (source) => {
    const known = new Set([...select.options].map((option) => option.value));
    for (const requirement of source.requirements || []) {
      if (known.has(requirement.id)) continue;
      select.append(el("option", { value: requirement.id }, `${requirement.id} ${requirement.title || ""}`.trim()));
    }
  };
  requirements(catalog);
  const chosenRoot = () => (container.dataset.show === "root" ? container.dataset.root : null);
  const decorate = (entries) => {
    const chosen = chosenRoot();
    for (const entry of entries) {
      const root = (entry.state === "fail" && roots.get(entry.check.id)) || "";
      if (entry.item.dataset.root !== root) entry.item.dataset.root = root;
      entry.item.classList.toggle("root-out", chosen !== null && root !== chosen);
    }
  };
  // a filter shows only some checks of some groups: those groups are drawn whole
  const shown = (group) => {
    if (select.value !== "" && (group.requirement ? group.requirement.id : "") !== select.value) return false;
    const show = container.dataset.show || "all";
    return show === "fail" ? group.fails > 0 : show === "changed" ? group.changedCount > 0 : show === "root" ? group.rootCount > 0 : select.value !== "";
  };
  const apply = () => {
    const chosen = chosenRoot();
    tally(panel, roots, chosen);
    for (const group of panel.groups) {
      group.section.hidden = select.value !== "" && group.section.dataset.req !== select.value;
      group.section.dataset.fails = String(group.fails);
      group.section.dataset.changed = String(group.changedCount);
      group.section.dataset.rootCount = String(group.rootCount);
      if (shown(group)) panel.build(group, group.checks.length);
    }
    decorate(panel.entries);
  };
  wireButtons(container, bar, () => {
    fillRoots(roots, chosenRoot());
    apply();
  });
  select.onchange = apply;
  return {
    decorate,
    requirements: (task) => {
      requirements(task);
      if (lastStep) apply();
    },
    update(step) {
      lastStep = step;
      roots = stepRoots(panel);
      const { turned } = tally(panel, roots, chosenRoot());
      // the totals over every check of the step, not only the groups the panel holds (drawn from a
      // run head, it holds the first ones until the task file is in)
      fill(document.getElementById("checks-fail-count"), String(countOf(typeof step.checks === "string" ? step.checks : "", "0")));
      fill(document.getElementById("checks-changed-count"), String(Array.isArray(step.changed) ? step.changed.length : 0));
      fill(flips, flipsText(step, turned));
      fillRoots(roots, chosenRoot());
      apply();
    },
  };
}
