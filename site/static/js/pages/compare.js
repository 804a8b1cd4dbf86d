// Compare view: two runs of one task side by side (?a=RUN&b=RUN).
//
// Stable ids and data attributes (tests rely on them):
//   #compare-error      shown (role=alert) when a run or the task cannot be loaded, or the runs' tasks differ
//   #pick-a, #pick-b    selects of the task's runs (the two shown until data/task-runs is in); #compare-swap swaps them
//   performance mark "compare-rendered": both runs drawn (before the task's run list is loaded);
//                       body[data-ready] once the pickers list every run of the task
//   #divergence         the first step where the runs differ: [data-step=n][data-what="tool call,check states"],
//                       data-step="" when they never differ; links a.diverge-a / a.diverge-b open each run there
//   #compare-curve-svg  path#curve-a and path#curve-b (data-totals: comma-joined totals), line#diverge-line
//   #compare-checks     tr[data-check-id][data-a][data-b] (pass|fail|na|none) for checks whose final state differs;
//                       those failing on one side for a root two or more of them share (lib/roots.js) in
//                       tbody.root-group[data-side=a|b][data-root][data-count], folded under its tr.root-row
//                       (button.root-toggle[aria-expanded] unfolds it); the others in tbody.root-others
//   #compare-requirements tr[data-req] with td[data-side=a|b][data-q][data-s]
//   #compare-view[data-live-generation]  under `alertforge view`: the export generation last drawn
//   #compare-episode    two episode runs: aligned actions, reward sums, score parts (episode-compare.js);
//                       the checks and requirements panels are hidden then
// Every string from a run is inserted as text (see dom.js).

import { byId, el, fill, svg, clear, showPageError } from "../lib/dom.js";
import { blameAt, causeAt, failureAt, finalReward, firstDivergence, loadRun, loadTask, loadTaskRuns, stateAt } from "../lib/data.js";
import { formatReward, statusBadgeAfterSpace, statusLabel } from "../lib/format.js";
import { pageQuery, readParams, writeParams } from "../lib/params.js";
import { failureRoots, sharedRoots } from "../lib/roots.js";
import { watchLive } from "../lib/live.js";

const STATE_NAMES = { 1: "pass", 0: "fail", "-": "na", "": "none" };
const STATE_WORDS = { pass: "passes", fail: "fails", na: "not applicable", none: "not graded" };

function showError(message) {
  showPageError("compare", "Cannot compare these runs.", message);
}

function runLink(run, n, checkId, hunk = null) {
  const params = new URLSearchParams({ run: run.run_id, step: String(n) });
  if (checkId) params.set("check", checkId);
  if (hunk !== null && hunk !== undefined) params.set("hunk", String(hunk));
  return `run.html?${params.toString()}`;
}

/** A failing check's cause line and the link to the step (and hunk) that broke it. */
function whyParts(run, n, index, check) {
  const cause = causeAt(run, n, check.id);
  const blame = blameAt(run, n, index, check.id);
  return [
    cause ? el("div", { class: "check-cause", dataset: { causeKind: cause.kind } }, el("span", { class: "cause-kind" }, cause.kind), " ", cause.summary) : null,
    blame ? el("div", { class: "check-blame" }, el("a", { class: "blame-link", href: runLink(run, blame.step, check.id, blame.hunk), dataset: { step: String(blame.step) } },
      blame.step === 0 ? "Failing from the start (the pristine repo)" : `Broken at step ${blame.step}${blame.hunk === null ? "" : `, hunk ${blame.hunk + 1}`}`)) : null,
  ];
}

function renderMeta(target, run) {
  const final = run.final || {};
  const items = [
    ["Run", [el("a", { href: runLink(run, 0) }, run.run_id), statusBadgeAfterSpace(el, run.status)]],
    ["Policy", run.policy ?? "\u2014"],
    ["Model", run.model ?? "\u2014"],
    ["Steps", String(run.steps.length - 1)],
    ["Final reward", formatReward(finalReward(run))],
    ["Solved", el("span", { class: ["badge", final.solved === true ? "badge-pass" : "badge-muted"] }, final.solved === true ? "solved" : "no")],
    ["Status", statusLabel(run.status) + (run.status === "failed" && run.error ? `: ${run.error}` : "")],
  ];
  fill(target, items.map(([name, value]) => el("div", null, el("dt", null, name), el("dd", { dataset: { field: name.toLowerCase().replace(" ", "_") } }, value))));
}

function renderDivergence(a, b) {
  const target = byId("divergence");
  const found = firstDivergence(a, b);
  if (!found) {
    target.dataset.step = "";
    target.dataset.what = "";
    fill(target, "The runs are the same step by step: same tool calls, same check states, same rewards.");
    return null;
  }
  target.dataset.step = String(found.n);
  target.dataset.what = found.what.join(",");
  if (found.what[0] === "length") {
    const shorter = a.steps.length < b.steps.length ? "A" : "B";
    fill(target, `The runs agree up to step ${found.n - 1}; run ${shorter} ends there. `,
      el("a", { class: "diverge-a", href: runLink(a, Math.min(found.n, a.steps.length - 1)) }, "Open A"), " \u00b7 ",
      el("a", { class: "diverge-b", href: runLink(b, Math.min(found.n, b.steps.length - 1)) }, "Open B"));
    return found;
  }
  const sa = a.steps[found.n];
  const sb = b.steps[found.n];
  const call = (step) => (step.tool ? step.tool.name : step.source);
  fill(
    target,
    el("strong", null, `Step ${found.n}`),
    ` is the first step that differs (${found.what.join(", ")}): A ran `,
    el("code", null, call(sa)),
    ` and reached ${formatReward(sa.total)}; B ran `,
    el("code", null, call(sb)),
    ` and reached ${formatReward(sb.total)}. `,
    el("a", { class: "diverge-a", href: runLink(a, found.n) }, "Open A at this step"),
    " \u00b7 ",
    el("a", { class: "diverge-b", href: runLink(b, found.n) }, "Open B at this step"),
  );
  return found;
}

function renderCurves(a, b, divergence) {
  const container = clear(byId("compare-curve"));
  const WIDTH = 1000;
  const HEIGHT = 200;
  const PAD = { left: 44, right: 14, top: 12, bottom: 26 };
  const all = [...a.steps, ...b.steps].map((step) => step.total);
  const low = Math.min(0, ...all);
  const high = Math.max(1, ...all);
  const last = Math.max(1, a.steps.length - 1, b.steps.length - 1);
  const x = (n) => PAD.left + (n / last) * (WIDTH - PAD.left - PAD.right);
  const y = (value) => PAD.top + (1 - (value - low) / (high - low)) * (HEIGHT - PAD.top - PAD.bottom);
  const root = svg("svg", {
    id: "compare-curve-svg",
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-label": `Reward curves: run A ends at ${formatReward(a.steps.at(-1).total)}, run B at ${formatReward(b.steps.at(-1).total)}`,
  });
  for (const value of [low, (low + high) / 2, high]) {
    root.append(
      svg("line", { class: "grid", x1: PAD.left, x2: WIDTH - PAD.right, y1: y(value), y2: y(value) }),
      svg("text", { class: "axis-label", x: PAD.left - 6, y: y(value) + 4, "text-anchor": "end" }, value.toFixed(1)),
    );
  }
  root.append(
    svg("text", { class: "axis-label", x: PAD.left, y: HEIGHT - 6 }, "step 0"),
    svg("text", { class: "axis-label", x: WIDTH - PAD.right, y: HEIGHT - 6, "text-anchor": "end" }, `step ${last}`),
  );
  if (divergence) {
    root.append(svg("line", { id: "diverge-line", class: "diverge-line", x1: x(divergence.n), x2: x(divergence.n), y1: PAD.top, y2: HEIGHT - PAD.bottom }));
  }
  for (const [id, run] of [["curve-a", a], ["curve-b", b]]) {
    const totals = run.steps.map((step) => step.total);
    let path = `M ${x(0)} ${y(totals[0])}`;
    for (let n = 1; n < totals.length; n += 1) path += ` H ${x(n)} V ${y(totals[n])}`;
    root.append(svg("path", { id, class: `compare-line ${id}`, d: path, fill: "none", dataset: { totals: totals.join(",") } }, svg("title", null, `${id === "curve-a" ? "A" : "B"}: ${run.run_id}`)));
  }
  container.append(root);
}

function stateCell(run, n, index, check, side) {
  const state = STATE_NAMES[stateAt(run.steps[n], index)];
  const detail = state === "fail" ? failureAt(run, n, check.id) : "";
  return el(
    "td",
    { class: "compare-state", dataset: { side, state } },
    el("a", { class: ["state-pill", `state-${state}`], href: runLink(run, n, check.id) }, STATE_WORDS[state]),
    detail ? el("div", { class: "check-detail" }, detail) : null,
    ...(state === "fail" ? whyParts(run, n, index, check) : []),
  );
}

function checkRow(a, b, na, nb, check, index) {
  const sa = stateAt(a.steps[na], index);
  const sb = stateAt(b.steps[nb], index);
  return el(
    "tr",
    { dataset: { checkId: check.id, a: STATE_NAMES[sa], b: STATE_NAMES[sb] } },
    el("th", { scope: "row" }, el("div", { class: "check-label" }, check.label || check.id), el("div", { class: "check-meta" }, el("span", { class: "family" }, check.family || ""), " ", el("code", null, check.id))),
    stateCell(a, na, index, check, "a"),
    stateCell(b, nb, index, check, "b"),
  );
}

/** The root (lib/roots.js, as the run view's checks panel finds it) of each check failing at run's step n. */
function rootsAt(run, n, task) {
  const failing = [];
  task.checks.forEach((check, index) => {
    if (stateAt(run.steps[n], index) === "0") failing.push({ id: check.id, cause: causeAt(run, n, check.id) });
  });
  return failureRoots(failing);
}

/**
 * The differing checks `differing` ([{check, index}]) split into the groups of a root that two
 * or more of them share on the side that fails them ({side, root, members}, most members first),
 * and the others (catalog order).
 */
function groupByRoot(a, b, task, differing) {
  const roots = { a: rootsAt(a, a.steps.length - 1, task), b: rootsAt(b, b.steps.length - 1, task) };
  const last = { a: a.steps.at(-1), b: b.steps.at(-1) };
  const rootOfRow = ({ check, index }) => {
    const side = ["a", "b"].find((name) => stateAt(last[name], index) === "0");
    const root = side && roots[side].get(check.id);
    return root ? { side, root, key: JSON.stringify([side, root]) } : null;
  };
  const found = new Map(differing.map((entry) => [entry.check.id, rootOfRow(entry)]));
  const keys = new Map([...found].filter(([, place]) => place !== null).map(([id, place]) => [id, place.key]));
  const groups = sharedRoots(keys).map(([key]) => {
    const [side, root] = JSON.parse(key);
    return { side, root, members: differing.filter((entry) => keys.get(entry.check.id) === key) };
  });
  const grouped = new Set(groups.flatMap((group) => group.members.map((entry) => entry.check.id)));
  return { groups, others: differing.filter((entry) => !grouped.has(entry.check.id)) };
}

/** One root's group: a heading row (the root, the run failing it, the count, a fold button) and its rows, folded. */
function rootGroup(group, rows) {
  const toggle = el("button", { type: "button", class: "button root-toggle", "aria-expanded": "false" }, `Show the ${group.members.length} checks`);
  const heading = el("tr", { class: "root-row" }, el("th", { scope: "rowgroup", colspan: "3" },
    el("span", { class: "root-run" }, `Run ${group.side.toUpperCase()} fails`), " ",
    el("span", { class: "root-name" }, group.root), " ",
    el("span", { class: "count root-count" }, `${group.members.length} checks`), " ", toggle));
  for (const row of rows) row.hidden = true;
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
    fill(toggle, open ? "Hide them" : `Show the ${group.members.length} checks`);
    for (const row of rows) row.hidden = !open;
  });
  return el("tbody", { class: "root-group", dataset: { side: group.side, root: group.root, count: String(group.members.length) } }, heading, rows);
}

function renderChecks(a, b, task) {
  const target = clear(byId("compare-checks"));
  const na = a.steps.length - 1;
  const nb = b.steps.length - 1;
  const differing = [];
  task.checks.forEach((check, index) => {
    if (stateAt(a.steps[na], index) !== stateAt(b.steps[nb], index)) differing.push({ check, index });
  });
  fill(byId("compare-checks-count"), String(differing.length));
  if (differing.length === 0) {
    target.append(el("p", { class: "empty", id: "compare-checks-empty" }, "Every check ends in the same state in both runs."));
    return;
  }
  const row = ({ check, index }) => checkRow(a, b, na, nb, check, index);
  const { groups, others } = groupByRoot(a, b, task, differing);
  const bodies = groups.map((group) => rootGroup(group, group.members.map(row)));
  if (others.length) {
    const heading = groups.length ? el("tr", { class: "root-row" }, el("th", { scope: "rowgroup", colspan: "3" }, "Each failing for a reason of its own")) : null;
    bodies.push(el("tbody", { class: "root-others" }, heading, others.map(row)));
  }
  target.append(el("table", { class: "data-table compare-table" }, el("thead", null, el("tr", null, el("th", { scope: "col" }, "Check"), el("th", { scope: "col" }, "A"), el("th", { scope: "col" }, "B"))), bodies));
}

function score(run, id) {
  const requirements = (run.final && run.final.requirements) || {};
  return requirements[id] || null;
}

function renderRequirements(a, b, task) {
  const target = clear(byId("compare-requirements"));
  if (task.requirements.length === 0) {
    target.append(el("p", { class: "empty" }, "This task has no requirements."));
    return;
  }
  const cell = (value, side) => {
    if (!value) return el("td", { class: "num", dataset: { side, q: "", s: "" } }, "\u2014");
    return el("td", { class: "num", dataset: { side, q: String(value.q), s: String(value.s) } }, `q ${formatReward(value.q)} \u00b7 s ${formatReward(value.s)}`);
  };
  const rows = task.requirements.map((requirement) => {
    const va = score(a, requirement.id);
    const vb = score(b, requirement.id);
    const better = va && vb ? (va.s > vb.s + 1e-12 ? "a" : vb.s > va.s + 1e-12 ? "b" : "") : "";
    return el(
      "tr",
      { dataset: { req: requirement.id, better } },
      el("th", { scope: "row" }, el("span", { class: "req-id" }, requirement.id), " ", el("span", { class: "req-title" }, requirement.title || ""), requirement.kind ? el("span", { class: "tag" }, requirement.kind) : null),
      cell(va, "a"),
      cell(vb, "b"),
    );
  });
  target.append(el("table", { class: "data-table compare-table" }, el("thead", null, el("tr", null, el("th", { scope: "col" }, "Requirement"), el("th", { scope: "col", class: "num" }, "A"), el("th", { scope: "col", class: "num" }, "B"))), el("tbody", null, rows)));
}

function fillPicker(select, runs, chosen) {
  clear(select);
  for (const row of runs) {
    const status = row.status && row.status !== "complete" ? ` \u00b7 ${statusLabel(row.status)}` : "";
    const label = `${row.run_id} \u00b7 ${row.policy ?? "?"} \u00b7 ${formatReward(row.reward)}${status}`;
    select.append(el("option", { value: row.run_id, selected: row.run_id === chosen }, label));
  }
}

/** Runs A and B and the task, in two round trips: both runs at once (B from the task's run
 * list only when the address names none), then the task file. */
async function loadPair(idA, idB) {
  const [a, named] = await Promise.all([loadRun(idA), idB ? loadRun(idB) : null]);
  const runList = loadTaskRuns(a.task_id).then((listing) => listing.runs);
  runList.catch(() => {});
  const pickB = async () => {
    const other = ((await runList).find((row) => row.run_id !== idA) || {}).run_id || idA;
    return loadRun(other);
  };
  const [task, b] = await Promise.all([loadTask(a.task_id), named ?? pickB()]);
  return { a, b, task, runList };
}

/** The pickers: the two runs at first paint, every run of the task once its list is in. */
async function installPickers(a, b, runList) {
  fillPicker(byId("pick-a"), [a], a.run_id);
  fillPicker(byId("pick-b"), [b], b.run_id);
  const go = (ra, rb) => {
    location.search = pageQuery({ a: ra, b: rb });
  };
  byId("pick-a").addEventListener("change", (event) => go(event.target.value, b.run_id));
  byId("pick-b").addEventListener("change", (event) => go(a.run_id, event.target.value));
  byId("compare-swap").addEventListener("click", () => go(b.run_id, a.run_id));
  const taskRuns = await runList;
  fillPicker(byId("pick-a"), taskRuns, a.run_id);
  fillPicker(byId("pick-b"), taskRuns, b.run_id);
}

async function main() {
  const params = readParams();
  const idA = params.get("a");
  const idB = params.get("b");
  if (!idA) {
    showError("No runs chosen: the address needs ?a=<run id>&b=<run id>.");
    return;
  }
  let loaded;
  try {
    loaded = await loadPair(idA, idB);
  } catch (error) {
    showError(error.message);
    return;
  }
  const { a, b, task, runList } = loaded;
  if (b.task_id !== a.task_id) {
    showError(`Run A is of task \u201c${a.task_id}\u201d and run B of \u201c${b.task_id}\u201d: only runs of one task can be compared.`);
    return;
  }
  writeParams({ a: a.run_id, b: b.run_id });
  document.title = `Compare ${a.run_id} and ${b.run_id} \u00b7 3amBench Replay`;
  fill(byId("compare-title"), task.title);
  const pickers = installPickers(a, b, runList);
  byId("compare-loading").hidden = true;
  byId("compare-view").hidden = false;
  await drawPair(a, b, task);
  performance.mark("compare-rendered");
  try {
    await pickers;
  } catch (error) {
    showError(error.message);
    return;
  }
  document.body.dataset.ready = "1";
  watchLive((info) => refreshPair(info, a.run_id, b.run_id, a.task_id));
}

/** Both runs' parts of the page, drawn again whole on each call. */
async function drawPair(a, b, task) {
  renderMeta(byId("compare-a-meta"), a);
  renderMeta(byId("compare-b-meta"), b);
  const divergence = renderDivergence(a, b);
  renderCurves(a, b, divergence);
  if (a.kind === "episode" && b.kind === "episode") {
    const { renderEpisodeCompare } = await import("../components/episode-compare.js");
    renderEpisodeCompare(a, b);
  } else {
    renderChecks(a, b, task);
    renderRequirements(a, b, task);
  }
}

/**
 * `alertforge view` exported the site again (lib/live.js): when either run changed, both are
 * read again and drawn in place (the reader's scroll kept); the pickers get the task's runs
 * as they are now. A run gone from the site (removed from the inputs) ends the page with a
 * message saying so.
 */
async function refreshPair(info, idA, idB, taskId) {
  const changed = Array.isArray(info.changed) ? info.changed : [];
  const listing = loadTaskRuns(taskId).then((l) => l.runs, () => null);
  if (changed.includes(idA) || changed.includes(idB)) {
    const [a, b] = await Promise.all([loadRun(idA, true), loadRun(idB, true)]);
    if (a === null || b === null) {
      showError(`Run ${a === null ? "A" : "B"} is not in the site any more (it left the inputs of alertforge view).`);
      return;
    }
    const { scrollX, scrollY } = window;
    await drawPair(a, b, await loadTask(a.task_id));
    window.scrollTo(scrollX, scrollY);
    byId("compare-view").dataset.liveGeneration = String(info.generation);
  }
  const runs = await listing;
  if (runs) {
    fillPicker(byId("pick-a"), runs, idA);
    fillPicker(byId("pick-b"), runs, idB);
  }
}

main().catch((error) => showError(`Unexpected error: ${error.message}`));
