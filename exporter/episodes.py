"""What the viewer shows of an action episode's step beyond the common fields: the ``env`` part.

For every site step of an ``episode`` run (docs/formats.md "Site data", episode runs) this
module derives, from the trajectory's ``extra.env``:

- the observation (``null`` on a step the server failed; ``shown_from`` then names the step
  whose observation still stands);
- ``stale``: ARIA keeps ``last_action_result`` / ``last_action_error`` until an action sets
  them again, so a value equal to the previous observation's is marked with the step it
  first appeared at (it may describe that step's action, not this one);
- ``changed``: per service, which table fields differ from the previous observation;
  ``alerts_new`` / ``alerts_cleared`` and ``evidence_new`` likewise;
- ``acted_on``: the service the action names (its ``service`` argument, when it is one);
- ``penalties``: the penalty kinds of the step: the names of the penalty components of
  ARIA's reward split (``extra.env.components``, recorder/episodes/rewards.py), or
  ``server error``; a run recorded before the split has none, and gets the kinds
  :func:`penalty_kinds` guesses from the action and the reward's sign, marked by
  ``penalties_guessed``;
- ``aria_step`` (ARIA's own step counter; None on a failed action, which ARIA does not
  count), ``components``, ``explained``, and for dual-agent runs ``agent``, ``finding``,
  ``finding_index``, ``findings_seen``, ``observer_reward``, ``accepted`` (pass-through);
- ``resolution``: ``info.resolution`` or ``info.reason`` once ``done`` (the end of the
  incident comes from these, never from alert or service states, which ARIA leaves degraded
  in some tasks after resolution).
"""

from __future__ import annotations

from typing import Any

from contract.site import SiteStep

SERVICE_FIELDS = (
    "status",
    "cpu_percent",
    "memory_percent",
    "error_rate",
    "latency_p99_ms",
    "replicas_running",
    "replicas_desired",
    "current_version",
    "last_deployed",
    "minutes_degraded",
    "sla_breach",
)
"""The service table's fields compared between steps (plus ``sla`` from ``sla_status``)."""

STALE_FIELDS = ("last_action_result", "last_action_error")

REMEDIATIONS = frozenset(
    {"restart_service", "rollback", "scale_up", "create_index", "block_ip_range", "failover"}
)
"""Action types that change the system (a "fix"); the others read or report."""

PENALTY_KINDS = (
    "fix before diagnosis",
    "collateral restart",
    "red herring",
    "symptom before cause",
    "wrong fix",
    "wrong block",
    "wrong index",
    "forbidden failover",
    "bad region",
    "no such failover",
    "timed out",
    "not applicable",
    "late noop",
    "unexplained",
    "server error",
)
"""The penalty components of ARIA's step rewards (recorder/episodes/rewards.py names them
after the task code), then a reward no rule explains and an action the server failed."""

GUESSED_KINDS = (
    "collateral restart",
    "forbidden failover",
    "wrong fix",
    "wrong diagnosis",
    "excess noop",
    "other penalty",
    "fix before diagnosis",
    "server error",
)
"""Every kind :func:`penalty_kinds` can guess for a run recorded before the reward split."""

PASS_THROUGH = ("aria_step", "components", "explained", "agent", "finding", "finding_index",
                "findings_seen", "observer_reward", "accepted", "refused", "before_responder_step")
"""``extra.env`` fields the viewer shows as recorded."""


def penalty_kinds(
    action_type: str, reward: float, *, error: bool, diagnosed: bool, diagnosis_credited: bool
) -> list[str]:
    """The penalty kinds one step shows, from its action type and the sign of its reward.

    ARIA's reward is a sum and does not say which penalty it applied; these kinds follow its
    penalty list (CASE-README "Reward"): restarting a healthy service (``collateral
    restart``), fixing before any diagnosis (``fix before diagnosis``, with or besides
    another kind), a failover that was not allowed (``forbidden failover``), a diagnosis that
    earned nothing while no earlier one had (``wrong diagnosis``), another fix with a
    negative reward (``wrong fix``), late noops (``excess noop``), any other negative reward
    (``other penalty``) and an action the server failed (``server error``).

    ``diagnosed``: an earlier step was a diagnose the server answered; ``diagnosis_credited``:
    an earlier diagnose earned a positive reward.
    """
    if error:
        return ["server error"]
    kinds: list[str] = []
    if action_type == "diagnose":
        if reward <= 0 and not diagnosis_credited:
            kinds.append("wrong diagnosis")
        elif reward < 0:
            kinds.append("other penalty")
        return kinds
    if reward >= 0:
        return kinds
    if action_type == "restart_service":
        kinds.append("collateral restart")
    elif action_type == "failover":
        kinds.append("forbidden failover")
    elif action_type in REMEDIATIONS:
        kinds.append("wrong fix")
    elif action_type == "noop":
        kinds.append("excess noop")
    else:
        kinds.append("other penalty")
    if action_type in REMEDIATIONS and not diagnosed:
        kinds.append("fix before diagnosis")
    return kinds


def _services(observation: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    rows = (observation or {}).get("services")
    if not isinstance(rows, list):
        return {}
    return {
        row["name"]: row
        for row in rows
        if isinstance(row, dict) and isinstance(row.get("name"), str)
    }


def _sla(observation: dict[str, Any] | None) -> dict[str, Any]:
    value = (observation or {}).get("sla_status")
    return value if isinstance(value, dict) else {}


def _alert_ids(observation: dict[str, Any] | None) -> list[str]:
    alerts = (observation or {}).get("active_alerts")
    if not isinstance(alerts, list):
        return []
    return [str(a.get("id")) for a in alerts if isinstance(a, dict) and a.get("id") is not None]


def _evidence_count(observation: dict[str, Any] | None) -> int:
    evidence = (observation or {}).get("evidence_log")
    return len(evidence) if isinstance(evidence, list) else 0


def service_changes(
    previous: dict[str, Any] | None, current: dict[str, Any] | None
) -> tuple[dict[str, list[str]], list[str]]:
    """``({service: [changed fields]}, [services new in current])`` between two observations.

    Fields are :data:`SERVICE_FIELDS` and ``sla`` (the service's ``sla_status``). Without a
    previous observation nothing counts as changed or new.
    """
    if previous is None or current is None:
        return {}, []
    before, after = _services(previous), _services(current)
    sla_before, sla_after = _sla(previous), _sla(current)
    changed: dict[str, list[str]] = {}
    for name, row in after.items():
        if name not in before:
            continue
        fields = [f for f in SERVICE_FIELDS if row.get(f) != before[name].get(f)]
        if sla_after.get(name) != sla_before.get(name):
            fields.append("sla")
        if fields:
            changed[name] = fields
    return changed, [name for name in after if name not in before]


def _known_services(observation: dict[str, Any] | None) -> set[str]:
    names = set(_services(observation))
    dependencies = (observation or {}).get("service_dependencies")
    if isinstance(dependencies, list):
        for entry in dependencies:
            if isinstance(entry, dict) and isinstance(entry.get("service"), str):
                names.add(entry["service"])
    return names


def _number(value: Any) -> int | float:
    """A reward as recorded, 0 when it is not a number."""
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _dict_or_none(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


class _EpisodeWalk:
    """What carries from step to step while :func:`episode_parts` walks an episode: the
    observation in force and its step, the step each stale-prone field was last set at, and
    whether a diagnosis was made (and credited) yet."""

    def __init__(self) -> None:
        self.shown: dict[str, Any] | None = None
        self.shown_from: int | None = None
        self.set_at: dict[str, int] = {}
        self.diagnosed = False
        self.credited = False

    def stale_fields(self, observation: dict[str, Any] | None, n: int) -> dict[str, int | None]:
        """``{field: step it was last set at, or None}`` for :data:`STALE_FIELDS` at step ``n``;
        makes ``observation`` (when there is one) the one in force."""
        stale: dict[str, int | None] = {name: None for name in STALE_FIELDS}
        if observation is None:
            return stale
        for name in STALE_FIELDS:
            value = observation.get(name)
            if self.shown is None or value is None or value != self.shown.get(name):
                self.set_at[name] = n
            elif name in self.set_at and self.set_at[name] != n:
                stale[name] = self.set_at[name]
        self.shown, self.shown_from = observation, n
        return stale

    def penalties(self, action_type: str | None, reward: float, error: bool,
                  components: Any = None) -> list[str]:
        """The penalty kinds of this step's action: its penalty components, else
        :func:`penalty_kinds`'s guess; notes a diagnosis."""
        if action_type is None:
            return []
        if isinstance(components, list):
            if error:
                return ["server error"]
            return list(dict.fromkeys(
                str(c.get("name")) for c in components
                if isinstance(c, dict) and _number(c.get("amount")) < 0))
        penalties = penalty_kinds(action_type, reward, error=error, diagnosed=self.diagnosed,
                                  diagnosis_credited=self.credited)
        if action_type == "diagnose" and not error:
            self.diagnosed = True
            self.credited = self.credited or reward > 0
        return penalties


def _observation_changes(previous: dict[str, Any] | None,
                         observation: dict[str, Any] | None) -> dict[str, Any]:
    """What changed from the observation in force before to this step's own (empty without one)."""
    changed, new_services = service_changes(previous, observation)
    alerts_before, alerts_after = set(_alert_ids(previous)), _alert_ids(observation)
    fresh = observation is not None
    return {
        "changed": changed if fresh else {},
        "new_services": new_services if fresh else [],
        "alerts_new": [a for a in alerts_after if previous is not None and a not in alerts_before],
        "alerts_cleared": sorted(alerts_before - set(alerts_after)) if fresh else [],
        "evidence_new": (
            max(0, _evidence_count(observation) - _evidence_count(previous))
            if fresh and previous is not None
            else 0
        ),
    }


def _step_part(walk: _EpisodeWalk, n: int, step: dict[str, Any], env: dict[str, Any]) -> dict[str, Any]:
    """The ``env`` part of site step ``n`` (see :func:`episode_parts`); advances ``walk``."""
    extra = step.get("extra") or {}
    observation = _dict_or_none(env.get("observation"))
    error = _dict_or_none(env.get("error"))
    calls = step.get("tool_calls") or []
    action_type = calls[0]["function_name"] if calls else None
    target = ((calls[0].get("arguments") or {}) if calls else {}).get("service")
    info = env.get("info") if isinstance(env.get("info"), dict) else {}
    done = env.get("done") is True
    previous = walk.shown
    stale = walk.stale_fields(observation, n)
    components = env.get("components")
    if error is not None and not isinstance(components, list) and "aria_step" in env:
        components = []  # recorded with the split: a failed action has no components
    penalties = walk.penalties(action_type, _number(env.get("reward", 0)), error is not None,
                               components)
    return {
        **{name: env.get(name) for name in PASS_THROUGH if name in env},
        "penalties_guessed": not isinstance(components, list) and bool(penalties),
        "observation": observation,
        "shown_from": walk.shown_from,
        "done": done,
        "info": info,
        "error": error,
        "resolution": (info.get("resolution") or info.get("reason")) if done else None,
        "acted_on": target if isinstance(target, str) and target in _known_services(walk.shown) else None,
        "stale": stale,
        **_observation_changes(previous, observation),
        "penalties": penalties,
        "transport": _dict_or_none(extra.get("transport")),
    }


def episode_parts(trajectory_steps: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """The ``env`` part of every site step (None for a step without ``extra.env``).

    Each part: ``{observation, shown_from, done, info, error, resolution, acted_on, stale{},
    changed{}, new_services[], alerts_new[], alerts_cleared[], evidence_new, penalties[],
    transport}``; see the module docstring for what each means. ``shown_from`` is the step
    ``n`` whose observation is the current one (``n`` itself unless this step has none).
    In a dual-agent run, ``observer_observation`` (the observer's view: alerts, logs,
    evidence, which the responder's view lacks) is set on the steps where it changed, and
    ``observer_from`` on every step from the first one names the step whose view is in force.
    """
    walk = _EpisodeWalk()
    parts: list[dict[str, Any] | None] = []
    observer: dict[str, Any] | None = None
    observer_from: int | None = None
    for n, step in enumerate(trajectory_steps):
        env = (step.get("extra") or {}).get("env")
        part = _step_part(walk, n, step, env) if isinstance(env, dict) else None
        view = _dict_or_none(env.get("observer_observation")) if isinstance(env, dict) else None
        if part is not None and view is not None and view != observer:
            observer, observer_from = view, n
            part["observer_observation"] = view
        if part is not None and observer_from is not None:
            part["observer_from"] = observer_from
        parts.append(part)
    return parts


def attach_episode_parts(site_steps: list[SiteStep], trajectory_steps: list[dict[str, Any]]) -> None:
    """Set ``env`` on every site step of an episode run (``null`` where the step has no env)."""
    for site_step, part in zip(site_steps, episode_parts(trajectory_steps), strict=True):
        site_step.env = part


def episode_head(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """The run head's ``episode`` block: what the episode board shows at its first steps that
    only a later step knows (docs/formats.md "Site data", run heads).

    ``steps``: the site steps of an episode run (``env`` set by :func:`attach_episode_parts`).
    Returns ``{done_step, resolution}``: the ``n`` of the first step whose ``env.done`` is
    true (the end of the incident, the same rule as lastDoneStep in
    site/static/js/components/episode-score.js), and that step's ``env.resolution``; both
    None when no step says done (the recording stopped first).
    """
    for step in steps:
        env = step.get("env") or {}
        if env.get("done") is True:
            return {"done_step": step["n"], "resolution": env.get("resolution")}
    return {"done_step": None, "resolution": None}


def episode_failures(run_document: dict[str, Any], steps: list[SiteStep]) -> list[dict[str, Any]]:
    """Every penalized step of an episode run (``run_document``: its run file's values, for its
    ids; ``steps``: its site steps, ``env`` set by :func:`attach_episode_parts`), for a failure
    gallery by penalty kind.

    Returns ``[{kind, run_id, task_id, step, action, arguments, reward}]`` in step order, one
    entry per (step, kind); ``step`` is the site step ``n`` (link: ``run.html?run=..&step=n``).
    """
    failures = []
    for step in steps:
        env = step.env or {}
        for kind in env.get("penalties") or []:
            tool = step.tool or {}
            failures.append(
                {
                    "kind": kind,
                    "run_id": run_document["run_id"],
                    "task_id": run_document["task_id"],
                    "step": step.n,
                    "action": tool.get("name"),
                    "arguments": tool.get("arguments"),
                    "reward": step.reward,
                }
            )
    return failures
