// @ts-check
// Live updates under `alertforge view` (alertforge/view/): its server sends every answer with
// `Server-Timing: alertforge-live` and answers data/live.json with {live: true, generation, phase,
// runs, found, changed[], problems{}}, raising generation each time it exports the site again. A page
// polls only when its own navigation carried that header: on a static host, in the single exported
// file and on file:// it asks nothing.
//
// watchLive(onChange) polls while live; when generation moves, onChange(info) is awaited (the page
// re-reads its data and redraws in place). A status line (#live-status, role=status) says what the
// server is doing: "Live: 12 runs", "Live: 12 runs; reading more...", inputs it could not read.
//
// Stable ids (tests rely on them): #live-status[data-generation][data-phase].

import { el, fill, siteRoot } from "./dom.js";

const POLL_MS = 1000;

function statusLine() {
  let node = document.getElementById("live-status");
  if (!node) {
    node = el("p", { id: "live-status", class: "live-status muted", role: "status" });
    const main = document.getElementById("main") || document.body;
    main.prepend(node);
  }
  return node;
}

function describe(info) {
  const runs = `${info.runs} run${info.runs === 1 ? "" : "s"}`;
  const more = info.phase === "ready" ? "" : info.phase === "exporting" ? "; updating\u2026" : `; reading more (${info.found} found)\u2026`;
  const problems = Object.keys(info.problems || {}).length;
  return `Live: ${runs}${more}${problems ? ` \u00b7 ${problems} input${problems === 1 ? "" : "s"} not shown (see the terminal)` : ""}`;
}

async function fetchInfo() {
  try {
    const response = await fetch(`${siteRoot()}data/live.json`, { cache: "no-store" });
    if (!response.ok) return null;
    const info = await response.json();
    return info && info.live === true && Number.isInteger(info.generation) ? info : null;
  } catch {
    return null;
  }
}

/** Whether this page was served by `alertforge view` (its navigation's Server-Timing names it). */
export function servedLive() {
  if (location.protocol === "file:" || document.getElementById("site-data")) return false;
  const navigation = /** @type {PerformanceNavigationTiming | undefined} */ (performance.getEntriesByType("navigation")[0]);
  return Boolean(navigation && Array.isArray(navigation.serverTiming)
    && navigation.serverTiming.some((entry) => entry.name === "alertforge-live"));
}

/** Poll data/live.json while the server is live; await onChange(info) when the site was exported again. */
export function watchLive(onChange) {
  if (!servedLive()) return;
  let seen = null;
  let busy = false;
  const tick = async () => {
    const info = await fetchInfo();
    if (info === null) return; // a static host, or the server stopped: nothing more to do
    const line = statusLine();
    fill(line, describe(info));
    line.dataset.phase = info.phase;
    if (seen !== null && info.generation !== seen && !busy) {
      busy = true;
      try {
        await onChange(info);
        seen = info.generation;
      } catch (error) {
        fill(line, `${describe(info)} \u00b7 could not update this page: ${error.message}`);
      } finally {
        busy = false;
      }
    } else if (seen === null) {
      seen = info.generation;
    }
    line.dataset.generation = String(seen);
    setTimeout(tick, POLL_MS);
  };
  tick();
}
