// The run view's parts only some runs need (pages/run.js): the chunks that draw them, imported
// when a run needs them, and the episode board's stylesheet.

const noop = () => {};

// Parts only some runs need come in chunks of their own (exporter/bundle.py PAGE_CHUNKS), imported
// once the head or the run file says the run needs them (needParts): an episode's board; a model's
// turns, ATIF parts (media, subagents, copied context, trial sections) and a Harbor trial. Until
// then, and for a run that needs none, they draw nothing (their blocks wait in <template>s).
export const parts = {
  renderModelTurn: noop, renderRunModel: noop, renderStepAtif: noop, renderTrialPanel: noop,
  mountEpisodeBoard: () => null, mountEpisodeView: () => null,
};
const partsLoaded = new Set();

/** Whether `source` (a run file or head) has a part the atif chunk draws (exporter/run_page.py
 * has_atif_parts: such a run's own page leaves its first step to the view). */
function hasAtifParts(source) {
  return Boolean(source.llm || source.harbor || source.subagents?.length || source.steps.some((step) =>
    step.llm || step.copied || step.section || step.media?.length || step.subagents?.length));
}

/**
 * Resolves once the episode board's rules apply: a page whose stylesheet is cut without them
 * (run.html: `data-episode-styles` on the body names static/episode.css, exporter/stylesheets.py)
 * loads them, or takes the link the inlined prefetch script added; a page whose stylesheet holds
 * them (the single exported file) asks nothing. A stylesheet that fails to load is not waited for.
 * @returns {Promise<void>}
 */
function episodeStyles() {
  const href = document.body.dataset.episodeStyles;
  if (!href) return Promise.resolve();
  let link = /** @type {HTMLLinkElement | null} */ (document.getElementById("episode-styles"));
  if (!link) {
    link = Object.assign(document.createElement("link"), { id: "episode-styles", rel: "stylesheet", href });
    link.addEventListener("load", () => { link.dataset.state = "done"; }, { once: true });
    link.addEventListener("error", () => { link.dataset.state = "done"; }, { once: true });
    document.head.append(link);
  }
  // data-state="done": loaded or failed (the prefetch script's link sets it too: an error
  // before this call would fire no event we could still wait for)
  if (link.sheet || link.dataset.state === "done") return Promise.resolve();
  const pending = link;
  return new Promise((resolve) => {
    pending.addEventListener("load", () => resolve(), { once: true });
    pending.addEventListener("error", () => resolve(), { once: true });
  });
}

/** Import the chunks `source` needs that are not in yet (their functions go into `parts`). */
export async function needParts(source) {
  if (source.kind === "episode" && !partsLoaded.has("episode")) {
    const [episode] = await Promise.all([import("../components/episode.js"), episodeStyles()]);
    Object.assign(parts, { mountEpisodeBoard: episode.mountEpisodeBoard, mountEpisodeView: episode.mountEpisodeView });
    partsLoaded.add("episode");
  }
  if (hasAtifParts(source) && !partsLoaded.has("atif")) {
    const [turn, atif, trial] = await Promise.all([import("../components/model-turn.js"),
      import("../components/atif-parts.js"), import("../components/trial-panel.js")]);
    Object.assign(parts, { renderModelTurn: turn.renderModelTurn, renderRunModel: turn.renderRunModel,
      renderStepAtif: atif.renderStepAtif, renderTrialPanel: trial.renderTrialPanel });
    partsLoaded.add("atif");
  }
}
