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
- ``penalties``: the penalty kinds the step shows (:func:`penalty_kinds`), for the viewer
  and for failure galleries;
- ``resolution``: ``info.resolution`` or ``info.reason`` once ``done`` (the end of the
  incident comes from these, never from alert or service states, which ARIA leaves degraded
  in some tasks after resolution).
"""

from __future__ import annotations

from typing import Any

SERVICE_FIELDS = (
    "status",
    "cpu_percent",
    "memory_percent",
    "error_rate",
    "latency_p99_ms",
    "replicas_running",
    "replicas_desired",
)
"""The service table's fields compared between steps (plus ``sla`` from ``sla_status``)."""

STALE_FIELDS = ("last_action_result", "last_action_error")

REMEDIATIONS = frozenset(
    {"restart_service", "rollback", "scale_up", "create_index", "block_ip_range", "failover"}
)
"""Action types that change the system (a "fix"); the others read or report."""

PENALTY_KINDS = (
    "collateral restart",
    "forbidden failover",
    "wrong fix",
    "wrong diagnosis",
    "excess noop",
    "other penalty",
    "fix before diagnosis",
    "server error",
)
"""Every kind :func:`penalty_kinds` can give, in the order it lists them."""


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


def episode_parts(trajectory_steps: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """The ``env`` part of every site step (None for a step without ``extra.env``).

    Each part: ``{observation, shown_from, done, info, error, resolution, acted_on, stale{},
    changed{}, new_services[], alerts_new[], alerts_cleared[], evidence_new, penalties[],
    transport}``; see the module docstring for what each means. ``shown_from`` is the step
    ``n`` whose observation is the current one (``n`` itself unless this step has none).
    """
    parts: list[dict[str, Any] | None] = []
    shown: dict[str, Any] | None = None
    shown_from: int | None = None
    set_at: dict[str, int] = {}
    diagnosed = credited = False
    for n, step in enumerate(trajectory_steps):
        extra = step.get("extra") or {}
        env = extra.get("env")
        if not isinstance(env, dict):
            parts.append(None)
            continue
        observation = env.get("observation") if isinstance(env.get("observation"), dict) else None
        error = env.get("error") if isinstance(env.get("error"), dict) else None
        calls = step.get("tool_calls") or []
        action_type = calls[0]["function_name"] if calls else None
        arguments = (calls[0].get("arguments") or {}) if calls else {}
        reward = env.get("reward", 0)
        reward = reward if isinstance(reward, (int, float)) and not isinstance(reward, bool) else 0
        previous = shown
        stale: dict[str, int | None] = {name: None for name in STALE_FIELDS}
        if observation is not None:
            for name in STALE_FIELDS:
                value = observation.get(name)
                if previous is None or value is None or value != previous.get(name):
                    set_at[name] = n
                elif name in set_at and set_at[name] != n:
                    stale[name] = set_at[name]
            shown, shown_from = observation, n
        changed, new_services = service_changes(previous, observation)
        alerts_before, alerts_after = set(_alert_ids(previous)), _alert_ids(observation)
        target = arguments.get("service")
        info = env.get("info") if isinstance(env.get("info"), dict) else {}
        done = env.get("done") is True
        penalties: list[str] = []
        if action_type is not None:
            penalties = penalty_kinds(
                action_type,
                reward,
                error=error is not None,
                diagnosed=diagnosed,
                diagnosis_credited=credited,
            )
            if action_type == "diagnose" and error is None:
                diagnosed = True
                credited = credited or reward > 0
        parts.append(
            {
                "observation": observation,
                "shown_from": shown_from,
                "done": done,
                "info": info,
                "error": error,
                "resolution": (info.get("resolution") or info.get("reason")) if done else None,
                "acted_on": target
                if isinstance(target, str) and target in _known_services(shown)
                else None,
                "stale": stale,
                "changed": changed if observation is not None else {},
                "new_services": new_services if observation is not None else [],
                "alerts_new": [
                    a for a in alerts_after if previous is not None and a not in alerts_before
                ],
                "alerts_cleared": sorted(alerts_before - set(alerts_after))
                if observation is not None
                else [],
                "evidence_new": (
                    max(0, _evidence_count(observation) - _evidence_count(previous))
                    if observation is not None and previous is not None
                    else 0
                ),
                "penalties": penalties,
                "transport": extra.get("transport")
                if isinstance(extra.get("transport"), dict)
                else None,
            }
        )
    return parts


def attach_episode_parts(
    site_steps: list[dict[str, Any]], trajectory_steps: list[dict[str, Any]]
) -> None:
    """Set ``env`` on every site step of an episode run (``null`` where the step has no env)."""
    for site_step, part in zip(site_steps, episode_parts(trajectory_steps), strict=True):
        site_step["env"] = part


def episode_failures(run_document: dict[str, Any]) -> list[dict[str, Any]]:
    """Every penalized step of an exported episode run, for a failure gallery by penalty kind.

    Returns ``[{kind, run_id, task_id, step, action, arguments, reward}]`` in step order, one
    entry per (step, kind); ``step`` is the site step ``n`` (link: ``run.html?run=..&step=n``).
    """
    failures = []
    for step in run_document.get("steps", []):
        env = step.get("env") or {}
        for kind in env.get("penalties") or []:
            tool = step.get("tool") or {}
            failures.append(
                {
                    "kind": kind,
                    "run_id": run_document["run_id"],
                    "task_id": run_document["task_id"],
                    "step": step["n"],
                    "action": tool.get("name"),
                    "arguments": tool.get("arguments"),
                    "reward": step.get("reward"),
                }
            )
    return failures
