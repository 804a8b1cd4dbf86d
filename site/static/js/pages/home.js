// Home page: every run in a virtual list (data/home.json + data/runs-index shards), filters, sorting,
// and search across runs (data/search shards). The first load takes home.json and the first shard
// only; scrolling loads the shards in view, filters and sorting all of them, search the shards of
// the runs it lists. The address holds filters and sort
// (?workflow=..&policy=..&q=..&sort=reward&dir=desc).
//
// Stable ids and data attributes (tests rely on them):
//   #runs-table tbody  tr[data-run-id] with td[data-field=run_id|task_id|workflow|tier|policy|reward|solved|steps];
//                      only the rows in view (plus a margin) exist; tr.spacer rows keep the height
//   #runs-table        [data-total] rows after filtering, [data-rendered] rows in the DOM, [data-loaded-shards]
//   #runs-count        "shown of total"; #runs-status says what is loading
//   #filter-<field>    selects (workflow, tier, policy, agent, model, kind, solved); #filter-text
//   th[data-sort]      aria-sort; button.sort-button[data-sort] toggles ascending/descending
//   #search-input, #search-form, #search-status, #search-results li[data-run-id] with a[data-step]
//   performance mark "home-rendered": the run list drawn from data (set just before body[data-ready])
// Every string from a run is inserted as text (see dom.js).

import { byId, el, fill, clear, runPagePath } from "../lib/dom.js";
import { loadJsonFile } from "../lib/data.js";
import { formatReward, runLabel, statusBadgeAfterSpace, statusLabel } from "../lib/format.js";
import { readParams, writeParams } from "../lib/params.js";
import { crc32 } from "../lib/crc32.js";
import { installAttemptsMore } from "../components/attempts.js";
import { watchLive } from "../lib/live.js";

const ROW_HEIGHT = 37;
const OVERSCAN = 12;
const FILTERS = ["workflow", "tier", "policy", "agent", "model", "kind", "solved", "status"];
const TOKEN = /[a-z0-9_]{3,40}/g;

const state = {
  home: null,
  shards: [],
  rows: [],
  loaded: 0,
  view: [],
  filters: {},
  text: "",
  sort: "run_id",
  dir: "asc",
  searchShards: new Map(),
};

function valueKey(value) {
  return value === null || value === undefined ? "" : String(value);
}

function optionLabel(field, value) {
  if (field === "solved") return value ? "solved" : "not solved";
  if (field === "status") return statusLabel(value);
  return value === null || value === undefined || value === "" ? "(none)" : String(value);
}

function fillFilters(params) {
  for (const field of FILTERS) {
    const select = byId(`filter-${field}`);
    const chosen = params.get(field);
    for (const [value, count] of state.home.facets[field] || []) {
      const key = field === "solved" ? (value ? "1" : "0") : value === null ? "\u0000" : valueKey(value);
      select.append(el("option", { value: key, selected: key === chosen }, `${optionLabel(field, value)} (${count})`));
    }
    select.closest("label").hidden = (state.home.facets[field] || []).length < 2 && !chosen;
    if (chosen !== null) state.filters[field] = chosen;
  }
  state.text = params.get("q") || "";
  byId("filter-text").value = state.text;
  const sort = params.get("sort");
  if (sort && state.home.fields.includes(sort)) state.sort = sort;
  state.dir = params.get("dir") === "desc" ? "desc" : "asc";
}

function rowObject(values, fields) {
  const row = {};
  fields.forEach((field, index) => {
    row[field] = values[index];
  });
  return row;
}

async function loadShard(number) {
  if (state.shards[number]) return state.shards[number];
  const spec = state.home.shards[number];
  const promise = loadJsonFile(spec.file, "Run list shard").then((shard) => {
    const rows = shard.rows.map((values) => rowObject(values, shard.fields));
    const start = state.home.shards.slice(0, number).reduce((sum, s) => sum + s.count, 0);
    rows.forEach((row, offset) => {
      state.rows[start + offset] = row;
    });
    state.loaded += 1;
    byId("runs-table").dataset.loadedShards = String(state.loaded);
    return rows;
  });
  state.shards[number] = promise;
  return promise;
}

function loadAll() {
  return Promise.all(state.home.shards.map((_, number) => loadShard(number)));
}

/** Load the shards holding the run rows numbered `numbers` (positions in run_id order). */
function loadRows(numbers) {
  const needed = new Set();
  for (const wanted of numbers) {
    let start = 0;
    state.home.shards.forEach((shard, number) => {
      if (wanted >= start && wanted < start + shard.count) needed.add(number);
      start += shard.count;
    });
  }
  return Promise.all([...needed].map(loadShard));
}

function filtersActive() {
  return state.text !== "" || Object.values(state.filters).some((v) => v !== "") || state.sort !== "run_id" || state.dir !== "asc";
}

function matches(row) {
  for (const [field, wanted] of Object.entries(state.filters)) {
    if (wanted === "") continue;
    if (field === "solved") {
      if ((row.solved ? "1" : "0") !== wanted) return false;
    } else if (wanted === "\u0000") {
      if (row[field] !== null && row[field] !== undefined) return false;
    } else if (valueKey(row[field]) !== wanted) return false;
  }
  if (state.text) {
    const needle = state.text.toLowerCase();
    if (!row.run_id.toLowerCase().includes(needle) && !String(row.task_id).toLowerCase().includes(needle)) return false;
  }
  return true;
}

function compare(a, b) {
  const x = a[state.sort];
  const y = b[state.sort];
  let order;
  if ((x === null) !== (y === null)) return x === null ? 1 : -1; // no value (no reward) last, either way
  if (typeof x === "number" && typeof y === "number") order = x - y;
  else if (typeof x === "boolean" || typeof y === "boolean") order = Number(Boolean(x)) - Number(Boolean(y));
  else order = valueKey(x).localeCompare(valueKey(y));
  if (order === 0) order = a.run_id < b.run_id ? -1 : a.run_id > b.run_id ? 1 : 0;
  return state.dir === "desc" ? -order : order;
}

async function recompute() {
  writeParams({ ...state.filters, q: state.text, sort: state.sort === "run_id" ? "" : state.sort, dir: state.dir === "asc" ? "" : state.dir });
  for (const th of document.querySelectorAll("#runs-table th[data-sort]")) {
    th.setAttribute("aria-sort", th.dataset.sort === state.sort ? (state.dir === "asc" ? "ascending" : "descending") : "none");
  }
  if (!filtersActive()) {
    state.view = null;
    render();
    return;
  }
  if (state.loaded < state.home.shards.length) {
    fill(byId("runs-status"), `Loading all ${state.home.runs_total} runs to filter and sort\u2026`);
    await loadAll();
  }
  state.view = state.rows.filter(matches).sort(compare);
  render();
}

// title: the whole text of a cell the fixed-width table may cut (as _runs_table.html writes it)
function cell(field, content, numeric, title) {
  return el("td", { class: numeric ? "num" : null, dataset: { field }, title: title ?? null }, content);
}

function textCell(field, value) {
  return cell(field, valueKey(value), false, value === null || value === undefined ? null : String(value));
}

function rowElement(row) {
  if (!row) return el("tr", { class: "placeholder" }, el("td", { colspan: "8", class: "muted" }, "Loading\u2026"));
  return el(
    "tr",
    { dataset: { runId: row.run_id } },
    cell("run_id", [el("a", { href: runPagePath(row.run_id), title: row.run_id }, runLabel(row.run_id, String(row.task_id))), row.kind !== "alerting" ? [" ", el("span", { class: "tag" }, row.kind)] : null, statusBadgeAfterSpace(el, row.status)]),
    cell("task_id", [row.task_id, row.incident ? [" ", el("span", { class: "tag", title: "the generated incident's failure mode" }, row.incident)] : null], false, row.task_id),
    textCell("workflow", row.workflow),
    cell("tier", valueKey(row.tier), true),
    textCell("policy", row.policy),
    cell("reward", row.reward === null ? el("span", { class: "muted", title: "no verifier reward and not graded here" }, "no reward") : formatReward(row.reward), true),
    cell("solved", el("span", { class: ["badge", row.solved ? "badge-pass" : "badge-muted"] }, row.solved ? "solved" : "no")),
    cell("steps", valueKey(row.steps), true),
  );
}

let lastWindow = "";

function render(force = true) {
  const table = byId("runs-table");
  const scroller = byId("runs-scroll");
  const total = state.view ? state.view.length : state.home.runs_total;
  const first = Math.max(0, Math.floor(scroller.scrollTop / ROW_HEIGHT) - OVERSCAN);
  const visible = Math.ceil((scroller.clientHeight || 600) / ROW_HEIGHT) + 2 * OVERSCAN;
  const last = Math.min(total, first + visible);
  const key = `${first}:${last}:${total}:${state.loaded}`;
  if (!force && key === lastWindow) return;
  lastWindow = key;
  const body = table.tBodies[0];
  const rows = [];
  let missing = false;
  for (let i = first; i < last; i += 1) {
    const row = state.view ? state.view[i] : state.rows[i];
    if (!row) missing = true;
    rows.push(rowElement(row));
  }
  const top = el("tr", { class: "spacer", "aria-hidden": "true" });
  const bottom = el("tr", { class: "spacer", "aria-hidden": "true" });
  top.style.height = `${first * ROW_HEIGHT}px`;
  bottom.style.height = `${(total - last) * ROW_HEIGHT}px`;
  body.replaceChildren(top, ...rows, bottom);
  table.dataset.total = String(total);
  table.dataset.rendered = String(rows.length);
  fill(byId("runs-count"), total === state.home.runs_total ? String(total) : `${total} of ${state.home.runs_total}`);
  if (total === 0) body.append(el("tr", null, el("td", { colspan: "8", class: "empty", id: "runs-empty" }, "No run matches these filters.")));
  fill(byId("runs-status"), "");
  if (missing && !state.view) {
    const needed = new Set();
    let start = 0;
    state.home.shards.forEach((shard, number) => {
      if (start < last && start + shard.count > first) needed.add(number);
      start += shard.count;
    });
    Promise.all([...needed].map(loadShard)).then(() => render());
  }
}

function installTable() {
  const scroller = byId("runs-scroll");
  let pending = false;
  scroller.addEventListener("scroll", () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      render(false);
    });
  });
  for (const button of document.querySelectorAll("#runs-table button.sort-button")) {
    button.addEventListener("click", () => {
      const field = button.dataset.sort;
      if (state.sort === field) state.dir = state.dir === "asc" ? "desc" : "asc";
      else {
        state.sort = field;
        state.dir = field === "reward" || field === "steps" || field === "solved" ? "desc" : "asc";
      }
      scroller.scrollTop = 0;
      recompute();
    });
  }
  for (const field of FILTERS) {
    byId(`filter-${field}`).addEventListener("change", (event) => {
      state.filters[field] = event.target.value;
      scroller.scrollTop = 0;
      recompute();
    });
  }
  let typing = null;
  byId("filter-text").addEventListener("input", (event) => {
    clearTimeout(typing);
    typing = setTimeout(() => {
      state.text = event.target.value.trim();
      scroller.scrollTop = 0;
      recompute();
    }, 120);
  });
  byId("run-filters").addEventListener("submit", (event) => event.preventDefault());
  byId("run-filters").addEventListener("reset", () => {
    state.filters = {};
    state.text = "";
    state.sort = "run_id";
    state.dir = "asc";
    setTimeout(recompute, 0);
  });
}

async function searchShard(number) {
  if (!state.searchShards.has(number)) state.searchShards.set(number, loadJsonFile(`data/search/${number}.json`, "Search shard"));
  return state.searchShards.get(number);
}

/** Runs (and their steps) holding every word of `query`, as [{number, steps[]}], best first. */
async function searchRuns(query) {
  const words = [...new Set(query.toLowerCase().match(TOKEN) || [])];
  if (words.length === 0) return { words, hits: [] };
  const count = state.home.search_shards;
  const postings = await Promise.all(words.map(async (word) => (await searchShard(crc32(word) % count)).tokens[word] || []));
  let runs = null;
  for (const list of postings) {
    const here = new Map(list.map(([number, ...steps]) => [number, steps]));
    if (runs === null) runs = here;
    else {
      for (const [number, steps] of runs) {
        if (!here.has(number)) runs.delete(number);
        else {
          const other = new Set(here.get(number));
          const both = steps.filter((n) => other.has(n));
          runs.set(number, both.length ? both : steps);
        }
      }
    }
  }
  const hits = [...runs].map(([number, steps]) => ({ number, steps: [...new Set(steps)].sort((a, b) => a - b) }));
  return { words, hits };
}

function installSearch() {
  byId("search-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    const query = byId("search-input").value;
    const results = clear(byId("search-results"));
    const status = byId("search-status");
    fill(status, "Searching\u2026");
    try {
      const { words, hits } = await searchRuns(query);
      if (words.length === 0) {
        fill(status, "Type a word of three or more letters or digits.");
        return;
      }
      await loadRows(hits.slice(0, 100).map((hit) => hit.number));
      fill(status, `${hits.length} run${hits.length === 1 ? "" : "s"} contain ${words.map((w) => `\u201c${w}\u201d`).join(" and ")}${hits.length > 100 ? "; the first 100 are listed" : ""}.`);
      for (const hit of hits.slice(0, 100)) {
        const row = state.rows[hit.number];
        if (!row) continue;
        const href = (n) => `run.html?${new URLSearchParams({ run: row.run_id, step: String(n) }).toString()}`;
        results.append(
          el(
            "li",
            { dataset: { runId: row.run_id } },
            el("a", { href: href(hit.steps[0] ?? 0), class: "search-run" }, row.run_id),
            el("span", { class: "muted" }, ` \u00b7 ${row.task_id} \u00b7 steps `),
            hit.steps.map((n, i) => [i ? ", " : "", el("a", { href: href(n), dataset: { step: String(n) } }, String(n))]),
          ),
        );
      }
    } catch (error) {
      fill(status, `Search failed: ${error.message}`);
    }
  });
}

/** The leaderboard of complete runs, or (checkbox) of every run: both are in the page. */
function installLeaderboardToggle() {
  const toggle = document.getElementById("leaderboard-include");
  if (!toggle || toggle.dataset.wired) return;
  toggle.dataset.wired = "1";
  toggle.addEventListener("change", () => {
    byId("leaderboard").hidden = toggle.checked;
    byId("leaderboard-all").hidden = !toggle.checked;
  });
}

async function startTable() {
  try {
    state.home = await loadJsonFile("data/home.json", "The run list (data/home.json)");
  } catch (error) {
    fill(byId("runs-status"), `${error.message}. The first runs above are shown without filters.`);
    return false;
  }
  const params = readParams();
  fillFilters(params);
  installTable();
  await loadShard(0);
  await recompute();
  return true;
}

/** The run list again from the new data files, with the reader's filters, sort and scroll kept. */
async function reloadRuns() {
  const home = await loadJsonFile("data/home.json", "The run list (data/home.json)");
  Object.assign(state, { home, shards: [], rows: [], loaded: 0, filters: {} });
  for (const field of FILTERS) {
    const select = byId(`filter-${field}`);
    for (const option of [...select.options].slice(1)) option.remove();
  }
  fillFilters(readParams());
  await loadShard(0);
  await recompute();
}

/**
 * `alertforge view` exported the site again: the sections drawn at export (leaderboard,
 * attempts, tasks) come from the new index.html; the run list from the new data, in place.
 */
async function refreshHome() {
  const response = await fetch("index.html", { cache: "no-store" });
  if (!response.ok) throw new Error(`index.html: HTTP ${response.status}`);
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  const hadTable = Boolean(document.getElementById("runs-table"));
  for (const section of fresh.querySelectorAll("main section[aria-labelledby]")) {
    const label = section.getAttribute("aria-labelledby");
    if (label === "search-heading" || (label === "runs-heading" && hadTable)) continue;
    const current = document.querySelector(`main section[aria-labelledby="${CSS.escape(label)}"]`);
    if (current) current.replaceWith(document.importNode(section, true));
  }
  installLeaderboardToggle();
  installAttemptsMore();
  if (hadTable) await reloadRuns();
  else if (document.getElementById("runs-table")) {
    installSearch();
    if (await startTable()) document.body.dataset.ready = "1";
  }
}

async function main() {
  installLeaderboardToggle();
  installAttemptsMore();
  watchLive(refreshHome);
  if (!document.getElementById("runs-table")) return;
  installSearch();
  if (!(await startTable())) return;
  performance.mark("home-rendered");
  document.body.dataset.ready = "1";
}

main().catch((error) => {
  const status = document.getElementById("runs-status");
  if (status) fill(status, `Unexpected error: ${error.message}`);
});
