// @ts-check
// Keyboard navigation of the run view: j/k and arrows, Home/End, Space play/pause, ? help, / search.
//
// Stable ids: #btn-play (aria-pressed="true" while playing), #play-speed (steps per second),
// #btn-help, #help-overlay (the dialog; hidden when closed, empty until first opened: #help-template), #help-close.

import { byId, fill } from "./dom.js";

function isTyping(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

/** The play button and its speed: {toggle(), stop()}; playing shows one step after another. */
function installPlayback(run) {
  const playButton = byId("btn-play");
  const speed = /** @type {HTMLSelectElement} */ (byId("play-speed"));
  let timer = null;

  function setPlaying(playing) {
    playButton.setAttribute("aria-pressed", playing ? "true" : "false");
    fill(playButton, playing ? "\u275A\u275A Pause" : "\u25B6 Play");
  }
  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    setPlaying(false);
  }
  function tick() {
    if (run.step() >= run.last()) {
      stop();
      return;
    }
    run.show(run.step() + 1);
  }
  function start() {
    if (run.step() >= run.last()) run.show(0);
    if (timer !== null) clearInterval(timer);
    timer = setInterval(tick, 1000 / Number(speed.value || 1));
    setPlaying(true);
  }
  function toggle() {
    if (timer === null) start();
    else stop();
  }
  speed.addEventListener("change", () => {
    if (timer !== null) start();
  });
  playButton.addEventListener("click", toggle);
  return { toggle, stop };
}

/** The help overlay: {overlay, open(), close()}; focus returns where it was when it closes. */
function installHelp() {
  const overlay = byId("help-overlay");
  let returnFocus = null;
  function open() {
    returnFocus = document.activeElement;
    if (!overlay.firstElementChild) {
      // the dialog's content is a <template> until first opened: a closed overlay holds no elements
      const template = /** @type {HTMLTemplateElement} */ (byId("help-template"));
      overlay.append(template.content.cloneNode(true));
      byId("help-close").addEventListener("click", close);
    }
    overlay.hidden = false;
    byId("help-close").focus();
  }
  function close() {
    overlay.hidden = true;
    if (returnFocus instanceof HTMLElement) returnFocus.focus();
  }
  byId("btn-help").addEventListener("click", open);
  overlay.addEventListener("click", (event) => {
    if (event.target === overlay) close();
  });
  return { overlay, open, close };
}

/** Keys while the help overlay is open: Escape or ? closes it, Tab stays on its close button. */
function helpKey(event, help) {
  if (event.key === "Escape" || event.key === "?") {
    event.preventDefault();
    help.close();
  } else if (event.key === "Tab") {
    event.preventDefault();
    byId("help-close").focus();
  }
}

/** The step a move key goes to (j/k, arrows, Home/End), or null for any other key. */
function moveTarget(event, run) {
  const moves = { ArrowRight: 1, j: 1, ArrowLeft: -1, k: -1 };
  if (event.key in moves) return run.step() + moves[event.key];
  if (event.key === "Home") return 0;
  if (event.key === "End") return run.last();
  return null;
}

/**
 * Wire keys, the play button and the help overlay. `run` gives {step(), last(), show(n)};
 * `onSearchKey` (optional) is called for "/". Returns {stop()} to pause playing.
 */
export function installNavigation(run, onSearchKey) {
  const playback = installPlayback(run);
  const help = installHelp();
  document.addEventListener("keydown", (event) => {
    if (!help.overlay.hidden) {
      helpKey(event, help);
      return;
    }
    if (event.altKey || event.ctrlKey || event.metaKey || isTyping(event.target)) return;
    if (event.key === "?") {
      event.preventDefault();
      help.open();
      return;
    }
    if (event.key === "/" && onSearchKey) {
      event.preventDefault();
      onSearchKey();
      return;
    }
    if (event.shiftKey) return;
    if (event.key === " " || event.key === "Spacebar") {
      if (event.target instanceof HTMLElement && event.target.matches("li.check, summary")) return;
      event.preventDefault();
      playback.toggle();
      return;
    }
    const target = moveTarget(event, run);
    if (target === null) return;
    event.preventDefault();
    run.show(Math.max(0, Math.min(run.last(), target)));
    performance.measure("step-switch", { start: event.timeStamp, end: performance.now() });
  });
  return { stop: playback.stop };
}
