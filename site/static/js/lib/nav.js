// Keyboard navigation of the run view: j/k and arrows, Home/End, Space play/pause, ? help, / search.
//
// Stable ids: #btn-play (aria-pressed="true" while playing), #play-speed (steps per second),
// #btn-help, #help-overlay (the dialog; hidden when closed), #help-close.

import { byId, fill } from "./dom.js";

function isTyping(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

/**
 * Wire keys, the play button and the help overlay. `run` gives {step(), last(), show(n)};
 * `onSearchKey` (optional) is called for "/". Returns {stop()} to pause playing.
 */
export function installNavigation(run, onSearchKey) {
  const playButton = byId("btn-play");
  const speed = byId("play-speed");
  const overlay = byId("help-overlay");
  let timer = null;
  let returnFocus = null;

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

  function openHelp() {
    returnFocus = document.activeElement;
    overlay.hidden = false;
    byId("help-close").focus();
  }
  function closeHelp() {
    overlay.hidden = true;
    if (returnFocus instanceof HTMLElement) returnFocus.focus();
  }
  byId("btn-help").addEventListener("click", openHelp);
  byId("help-close").addEventListener("click", closeHelp);
  overlay.addEventListener("click", (event) => {
    if (event.target === overlay) closeHelp();
  });

  document.addEventListener("keydown", (event) => {
    if (!overlay.hidden) {
      if (event.key === "Escape" || event.key === "?") {
        event.preventDefault();
        closeHelp();
      } else if (event.key === "Tab") {
        event.preventDefault();
        byId("help-close").focus();
      }
      return;
    }
    if (event.altKey || event.ctrlKey || event.metaKey || isTyping(event.target)) return;
    if (event.key === "?") {
      event.preventDefault();
      openHelp();
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
      toggle();
      return;
    }
    const moves = { ArrowRight: 1, j: 1, ArrowLeft: -1, k: -1 };
    let target = null;
    if (event.key in moves) target = run.step() + moves[event.key];
    else if (event.key === "Home") target = 0;
    else if (event.key === "End") target = run.last();
    if (target === null) return;
    event.preventDefault();
    run.show(Math.max(0, Math.min(run.last(), target)));
    performance.measure("step-switch", { start: event.timeStamp, end: performance.now() });
  });
  return { stop };
}
