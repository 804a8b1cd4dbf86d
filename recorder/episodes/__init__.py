"""Action-based incident episodes (ARIA-style environments) recorded into the common run format.

An episode is a run of kind ``episode``: an ATIF trajectory with one tool call per action
(``function_name`` = ``action_type``), the environment's observation as the observation and
``step.extra.env`` = ``{reward, total, done, info, observation}`` (docs/formats.md).

- :mod:`recorder.episodes.score`: running total and final-score parts (ARIA's rules);
- :mod:`recorder.episodes.writer`: builds and writes run folders (journal, atomic rewrites);
- :mod:`recorder.importers.aria_transcripts`: ``alertforge import-episodes`` (recorded transcripts);
- :mod:`recorder.environments.aria`: the HTTP and WebSocket adapters of a live server;
- :mod:`recorder.agents.episode_policies`: ``scripted`` (YAML action list) and ``random``;
- :mod:`recorder.episodes.live`: ``alertforge record --env aria`` (one episode from a server).
"""
