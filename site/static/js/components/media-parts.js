// Image and audio content parts (ATIF v1.6 / v1.8) of a step: shown when the run carries the
// file (url set by the exporter, always under data/media/, re-encoded by exporter/media_clean.py),
// named with the reason when it does not (the part's problem: not published, and why).

import { el } from "../lib/dom.js";
import { mediaAddress } from "../lib/data.js";

const KIND = { image: "Image", audio: "Audio" };

// the exporter's names only (contract/ids.py and atif_view.SAFE_NAME characters): no backslash
// or "%2e%2e", which a browser resolves as "/" and ".."
function safeUrl(url) {
  return typeof url === "string" && /^data\/media\/[A-Za-z0-9._-]+\/[A-Za-z0-9._-]+$/.test(url) && !url.includes("..") ? url : null;
}

function missingText(part, listed) {
  if (listed) return "this single file does not hold it, so only its name is shown.";
  if (typeof part.problem === "string" && part.problem) return `${part.problem}; only its name is shown.`;
  return "the file is not in the job folder, so only its name is shown.";
}

/** One part {type, media_type, path, url, duration_sec, problem?} as a <figure>. */
export function renderMediaPart(part) {
  const label = `${KIND[part.type] || "Media"} part ${part.path || "(no path)"}`;
  const listed = safeUrl(part.url);
  const url = listed && mediaAddress(listed);
  const caption = el("figcaption", null, el("code", null, String(part.path || "")),
    part.media_type ? ` (${part.media_type}${part.duration_sec ? `, ${part.duration_sec} s` : ""})` : "");
  if (!url) {
    return el("figure", { class: "media-part missing", dataset: { type: part.type } },
      el("p", { class: "muted" }, `${label}: ${missingText(part, listed)}`), caption);
  }
  const body = part.type === "audio"
    ? el("audio", { controls: true, src: url, preload: "none", "aria-label": label })
    : el("img", { src: url, alt: label, loading: "lazy" });
  return el("figure", { class: "media-part", dataset: { type: part.type } }, body, caption);
}

/** Every part of a list, or null when there is none. */
export function renderMediaParts(parts) {
  if (!Array.isArray(parts) || parts.length === 0) return null;
  return el("div", { class: "media-parts" }, parts.map(renderMediaPart));
}
