// @ts-check
// Failure gallery pages (gallery/index.html, gallery/<axis>-<slug>.html): static HTML the
// exporter renders, nothing to draw. Under `alertforge view` (lib/live.js), when the site is
// exported again the page reads its own new version and puts its main content in place,
// keeping the reader's scroll position; a page the new site no longer has says so and stays.
// On a static host and from disk the script does nothing.
//
// Stable ids (tests rely on them): #main[data-live-generation], #gallery-gone.

import { el } from "../lib/dom.js";
import { watchLive } from "../lib/live.js";

function goneNote() {
  let note = document.getElementById("gallery-gone");
  if (!note) {
    note = el("p", { id: "gallery-gone", class: "panel empty", role: "status" },
      "This page is not in the site any more (no run shows this mistake now); the gallery index lists what is.");
    document.getElementById("main").prepend(note);
  }
}

/** Put the main content of the page's new version in place (the site was exported again). */
async function refreshGallery(info) {
  const response = await fetch(location.href, { cache: "no-store" });
  if (response.status === 404) {
    goneNote();
    return;
  }
  if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html").getElementById("main");
  const main = document.getElementById("main");
  if (!fresh || !main) return;
  const status = document.getElementById("live-status");
  const { scrollX, scrollY } = window;
  main.replaceChildren(...[...fresh.childNodes].map((node) => document.importNode(node, true)));
  if (status) main.prepend(status);
  main.dataset.liveGeneration = String(info.generation);
  window.scrollTo(scrollX, scrollY);
}

watchLive(refreshGallery);
