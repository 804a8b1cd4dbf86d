"""One ARIA step's reward split into the components ARIA's task code adds up.

Source: the task step functions of Twilight-13/devops-incident-response at commit 230f8d5
(``tasks/task_<task>.py`` and the shared helpers of ``tasks/base.py``), read and restated
here as rules; no ARIA code is copied. Each component cites the file and lines it comes
from (``task_easy.py:180-183``).

ARIA returns only the sum (rounded to 4 places). Most components follow from what the run
shows (the action, the task, the once-per-episode tags paid so far, the step counter, the
services of the reset observation); where ARIA decides by matching text against keyword
lists this module does not restate (a diagnosis's cause keywords, ``generated``'s affected
service and fix), the split tries each possibility and keeps the one whose sum is the
reward: such a component is marked ``inferred``. A reward no possibility explains gets an
``unexplained`` component holding the difference, and the split says so.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

NOT_APPLICABLE = ("block_ip_range", "create_index", "failover")
"""Action types the curated tasks answer "not applicable" (security and database allow one)."""


@dataclass(frozen=True)
class Component:
    """One addend of a step reward: ``name`` (what ARIA pays or charges for), ``amount``
    (reward units, negative for a penalty), ``source`` (``file:lines`` at 230f8d5), the
    once-per-episode ``tag`` it sets (ARIA's ``rewards_given``), ``resolves`` (it ends the
    incident) and ``inferred`` (chosen because the reward matched, see the module doc)."""

    name: str
    amount: float
    source: str
    tag: str | None = None
    resolves: bool = False
    inferred: bool = False

    def as_dict(self) -> dict[str, Any]:
        """``{name, amount, source, kind: bonus|penalty, inferred}`` for run files."""
        return {"name": self.name, "amount": self.amount, "source": self.source,
                "kind": "penalty" if self.amount < 0 else "bonus", "inferred": self.inferred}


Group = list[list[Component]]
"""Alternatives of which exactly one applies (one alternative: the rule is certain)."""


@dataclass
class Episode:
    """What the split carries from step to step: the task's facts and ARIA's counters.

    ``failing`` is easy's failing service (the one down in the reset observation);
    ``healthy`` the services a restart of which is collateral (``healthy_services`` of each
    task's ``initialize``); ``step`` ARIA's step counter; ``tags`` the bonuses paid.
    """

    task_id: str
    failing: str = ""
    healthy: frozenset[str] = frozenset()
    step: int = 0
    tags: set[str] = field(default_factory=set)


def start_episode(task_id: str, observation: dict[str, Any]) -> Episode:
    """The split's state at ``/reset`` from its observation (a dict; services may be absent)."""
    services = [s for s in observation.get("services") or [] if isinstance(s, dict)]
    names = [str(s.get("name")) for s in services]
    down = [str(s.get("name")) for s in services if s.get("status") == "down"]
    failing = down[0] if down else ""
    healthy: frozenset[str] = frozenset()
    if task_id == "easy":  # task_easy.py:160, every service but the failing one
        healthy = frozenset(n for n in names if n != failing)
    elif task_id == "medium":  # task_medium.py:189
        healthy = frozenset({"notification-service", "user-service"})
    elif task_id == "bonus":  # task_bonus.py:125
        healthy = frozenset({"product-service"})
    return Episode(task_id=task_id, failing=failing, healthy=healthy)


def semantic_match(candidate: str, keywords: list[str]) -> bool:
    """ARIA's ``semantic_match`` (tasks/base.py:190-199): lowercase, ``-``/``_`` as spaces in
    the candidate, ``-`` as space in each keyword, substring containment of any keyword."""
    text = (candidate or "").lower().replace("-", " ").replace("_", " ")
    return bool(candidate) and any(k.lower().replace("-", " ") in text for k in keywords)


def _once(ep: Episode, tag: str, name: str, amount: float, source: str, **more) -> Group:
    return [[Component(name, amount, source, tag=tag, **more)]] if tag not in ep.tags else []


def _maybe(*components: Component) -> Group:
    """Either the components apply (keyword-decided) or none does."""
    return [[c for c in components], []]


def _diagnosed(ep: Episode) -> bool:
    return bool({"diagnose_correct", "diagnose_partial"} & ep.tags)


def _blind(ep: Episode, fix_tag: str) -> Group:
    """The blind-remediation penalty (tasks/base.py:322-334)."""
    if fix_tag in ep.tags or _diagnosed(ep):
        return []
    return [[Component("fix before diagnosis", -0.05, "tasks/base.py:322-334")]]


def _late_noop(ep: Episode, at: str, after: int, amount: float, source: str) -> Group:
    if at == "noop" and ep.step > after:
        return [[Component("late noop", amount, source)]]
    return []


def _not_applicable(at: str, types: tuple[str, ...], source: str) -> Group:
    return [[Component("not applicable", -0.10, source)]] if at in types else []


def _easy(ep: Episode, at: str, svc: str, a: dict[str, Any]) -> list[Group]:
    f = ep.failing
    groups: list[Group] = []
    if at in ("read_logs", "search_logs") and svc == f:
        groups.append(_once(ep, "logs_investigated", "logs read", 0.15, "task_easy.py:180-183"))
    if at == "read_metrics" and svc == f:
        groups.append(_once(ep, "read_metrics", "metrics read", 0.10, "task_easy.py:185-188"))
    if at == "read_runbook":
        groups.append(_once(ep, "runbook", "runbook read", 0.05, "task_easy.py:190-193"))
    if at == "diagnose" and "diagnose_correct" not in ep.tags:
        named = bool(f) and semantic_match(str(a.get("root_cause") or ""), [f, f.split("-")[0]])
        full = 0.15 if "diagnose_partial" in ep.tags else 0.30
        if named:
            groups.append(_maybe(Component("diagnosis", full, "task_easy.py:195-205",
                                           tag="diagnose_correct", inferred=True)))
        elif "diagnose_partial" not in ep.tags:
            groups.append(_maybe(Component("partial diagnosis", 0.15, "task_easy.py:206-209",
                                           tag="diagnose_partial", inferred=True)))
    if at == "restart_service":
        groups.append(_blind(ep, "restarted"))  # task_easy.py:212-213: the key is never set
        if svc == f:
            groups.append([[Component("fix", 0.40, "task_easy.py:214-225", resolves=True)]])
        elif svc in ep.healthy:
            groups.append([[Component("collateral restart", -0.10, "task_easy.py:226-228")]])
    groups.append(_late_noop(ep, at, 3, -0.04, "task_easy.py:230-231"))
    groups.append(_not_applicable(at, NOT_APPLICABLE, "task_easy.py:234-236"))
    return groups


def _medium(ep: Episode, at: str, svc: str, a: dict[str, Any]) -> list[Group]:
    inv = "inventory-service"
    groups = _medium_reads(ep, at, svc)
    if at == "restart_service" and svc == "notification-service":
        groups.append([[Component("red herring", -0.05, "task_medium.py:224-226")]])
    if at == "restart_service" and svc == "order-service" and "diagnose_correct" not in ep.tags:
        groups.append([[Component("symptom before cause", -0.10, "task_medium.py:228-231")]])
    if at == "diagnose" and "diagnose_correct" not in ep.tags:
        groups += _medium_diagnosis(ep, a)
    if at == "rollback" and svc == inv:
        groups += _medium_rollback(ep, a)
    if at in ("restart_service", "rollback") and svc in ep.healthy:
        groups.append([[Component("collateral restart", -0.10, "task_medium.py:265-266")]])
    groups.append(_late_noop(ep, at, 4, -0.03, "task_medium.py:267-268"))
    groups.append(_not_applicable(at, NOT_APPLICABLE, "task_medium.py:271-273"))
    return groups


def _medium_reads(ep: Episode, at: str, svc: str) -> list[Group]:
    """The medium task's once-paid reads (task_medium.py:210-221)."""
    inv = "inventory-service"
    groups: list[Group] = []
    if at in ("read_logs", "search_logs") and svc == inv:
        groups.append(_once(ep, "logs_investigated", "logs read", 0.10, "task_medium.py:210-212"))
    if at == "read_metrics" and svc == inv:
        groups.append(_once(ep, "read_metrics_inv", "metrics read", 0.10, "task_medium.py:213-215"))
    if at == "read_metrics" and svc == "order-service":
        groups.append(_once(ep, "read_metrics_ord", "metrics read", 0.05, "task_medium.py:216-218"))
    if at == "read_runbook":
        groups.append(_once(ep, "runbook", "runbook read", 0.05, "task_medium.py:219-221"))
    return groups


def _medium_diagnosis(ep: Episode, a: dict[str, Any]) -> list[Group]:
    """A medium-task diagnosis not yet paid in full (task_medium.py:233-243)."""
    rc = str(a.get("root_cause") or "")
    partial = Component("partial diagnosis", 0.10, "task_medium.py:241-243",
                        tag="diagnose_partial", inferred=True)
    unpaid = "diagnose_partial" not in ep.tags
    if semantic_match(rc, ["inventory"]):  # "inventory" is also a cause keyword (:24,32)
        return [[[Component("diagnosis", 0.25, "task_medium.py:233-240",
                            tag="diagnose_correct")]]]
    if unpaid:
        return [_maybe(partial)]
    return []


def _medium_rollback(ep: Episode, a: dict[str, Any]) -> list[Group]:
    """A rollback of the inventory service: the blind-fix penalty, and the fix (with the
    right-version bonus) the first time (task_medium.py:245-263)."""
    groups = [_blind(ep, "rollback_done")]
    if "rollback_done" not in ep.tags:
        fix = [Component("fix", 0.30, "task_medium.py:245-263", tag="rollback_done",
                         resolves=True)]
        version = str(a.get("version") or "")
        if "v2.3.0" in version or version in ("previous", "last"):
            fix.append(Component("right version", 0.10, "task_medium.py:249-250"))
        groups.append([fix])
    return groups


READS = ("read_logs", "search_logs")
GATHER: dict[str, tuple[dict[tuple[str, str], tuple[str, float]], str]] = {
    "hard": ({**{(t, s): v for t in READS for s, v in {
        "price-validation-service": ("rl_price", 0.05), "analytics-service": ("rl_analytics", 0.05),
        "data-pipeline-service": ("rl_pipeline", 0.05)}.items()},
        ("read_metrics", "analytics-service"): ("rm_analytics", 0.10),
        ("read_metrics", "data-pipeline-service"): ("rm_pipeline", 0.10)}, "task_hard.py:162-176"),
    "bonus": ({**{(t, s): v for t in READS for s, v in {
        "log-aggregator": ("rl_agg", 0.05), "ml-inference-service": ("rl_ml", 0.05)}.items()},
        ("read_metrics", "log-aggregator"): ("rm_agg", 0.05),
        ("read_metrics", "ml-inference-service"): ("rm_ml", 0.05)}, "task_bonus.py:142-154"),
    "security": ({(t, s): v for t in READS for s, v in {
        "api-gateway": ("rl_api", 0.10), "auth-service": ("rl_auth", 0.10),
        "rate-limiter": ("rl_rate", 0.05)}.items()}, "task_security.py:148-160"),
    "database": ({**{(t, s): v for t in READS for s, v in {
        "postgres-primary": ("rl_pg", 0.10), "analytics-service": ("rl_ana", 0.05)}.items()},
        ("read_metrics", "postgres-primary"): ("rm_pg", 0.10)}, "task_database.py:141-172"),
    "failover": ({(t, s): v for t in READS for s, v in {
        "api-gateway": ("rl_api", 0.05), "postgres-primary": ("rl_pg", 0.05)}.items()},
        "task_failover.py:155-165"),
}
"""The once-paid evidence reads per task: ``{(action type, service): (tag, amount)}``, source."""


def _gather(ep: Episode, at: str, svc: str) -> list[Group]:
    table, source = GATHER.get(ep.task_id, ({}, ""))
    hit = table.get((at, svc))
    return [_once(ep, hit[0], "evidence read", hit[1], source)] if hit else []


def _two_fixes(ep: Episode, comp: Component, other: str) -> Component:
    """A fix that resolves only once the other fix's tag is paid too."""
    return Component(comp.name, comp.amount, comp.source, tag=comp.tag,
                     resolves=other in ep.tags, inferred=comp.inferred)


def _hard(ep: Episode, at: str, svc: str, a: dict[str, Any]) -> list[Group]:
    groups = _gather(ep, at, svc)
    if at == "read_runbook":
        groups.append(_once(ep, "runbook", "runbook read", 0.05, "task_hard.py:178-180"))
    groups += _wrong_fix(ep, at)
    if at == "diagnose" and "diagnose_correct" not in ep.tags:
        alternatives = [[Component("diagnosis", 0.20, "task_hard.py:190-197",
                                   tag="diagnose_correct", inferred=True)]]
        if "diagnose_partial" not in ep.tags:
            alternatives.append([Component("partial diagnosis", 0.08, "task_hard.py:198-200",
                                           tag="diagnose_partial", inferred=True)])
        groups.append([*alternatives, []])
    if at == "rollback" and svc == "data-pipeline-service":
        groups.append(_blind(ep, "rollback_done"))
        if "rollback_done" not in ep.tags:
            fix = Component("fix: rollback", 0.25, "task_hard.py:202-212", tag="rollback_done")
            groups.append([[_two_fixes(ep, fix, "alert_oncall_done")]])
    if at == "alert_oncall" and "alert_oncall_done" not in ep.tags:
        fix = Component("fix: page on-call", 0.15, "task_hard.py:214-219", tag="alert_oncall_done")
        groups.append([[_two_fixes(ep, fix, "rollback_done")]])
    groups.append(_not_applicable(at, NOT_APPLICABLE, "task_hard.py:222-224"))
    return groups


def _bonus(ep: Episode, at: str, svc: str, a: dict[str, Any]) -> list[Group]:
    groups = _gather(ep, at, svc)
    if at == "read_runbook":
        groups.append(_once(ep, "runbook", "runbook read", 0.04, "task_bonus.py:156-158"))
    if at == "diagnose":
        alternatives = []
        if "diagnose_both" not in ep.tags:
            alternatives.append([Component("diagnosis (both causes)", 0.20, "task_bonus.py:160-167",
                                           tag="diagnose_both", inferred=True)])
        if "diagnose_one" not in ep.tags:
            alternatives.append([Component("diagnosis (one cause)", 0.08, "task_bonus.py:168-170",
                                           tag="diagnose_one", inferred=True)])
        groups.append([*alternatives, []])
    if at == "alert_oncall" and "fix_disk" not in ep.tags:
        disk = Component("fix: page for the disk", 0.20, "task_bonus.py:173-180", tag="fix_disk",
                         inferred=True)
        groups.append([[_two_fixes(ep, disk, "fix_ml")],
                       [Component("vague page", 0.08, "task_bonus.py:181-184", inferred=True)]])
    if at in ("rollback", "restart_service") and svc == "ml-inference-service":
        amount = 0.20 if at == "rollback" else 0.12
        fix = Component(f"fix: {at} ml-inference-service", amount, "task_bonus.py:187-197",
                        tag="fix_ml")
        if "fix_ml" not in ep.tags:
            groups.append([[_two_fixes(ep, fix, "fix_disk")]])
    if at in ("restart_service", "rollback") and svc in ep.healthy:
        groups.append([[Component("collateral restart", -0.08, "task_bonus.py:199-200")]])
    groups.append(_late_noop(ep, at, 5, -0.03, "task_bonus.py:201-202"))
    groups.append(_not_applicable(at, NOT_APPLICABLE, "task_bonus.py:205-207"))
    return groups


WRONG_FIX = {
    "hard": {"restart_service": (-0.15, "task_hard.py:183-188"),
             "scale_up": (-0.15, "task_hard.py:183-188")},
    "security": {"restart_service": (-0.15, "task_security.py:203-205"),
                 "rollback": (-0.10, "task_security.py:207-209")},
    "database": {"restart_service": (-0.10, "task_database.py:207-209"),
                 "scale_up": (-0.08, "task_database.py:211-213")},
}
"""Remediations a task charges for every time: ``{task: {action type: (amount, source)}}``."""


def _wrong_fix(ep: Episode, at: str) -> list[Group]:
    charge = WRONG_FIX.get(ep.task_id, {}).get(at)
    return [[[Component("wrong fix", charge[0], charge[1])]]] if charge else []


def _runbook(ep: Episode, at: str, a: dict[str, Any], suffix: str, tag: str,
             source: str) -> list[Group]:
    """A once-paid read of the one runbook whose name ends with ``suffix``."""
    if at == "read_runbook" and str(a.get("runbook") or "").endswith(suffix):
        return [_once(ep, tag, "runbook read", 0.05, source)]
    return []


def _one_diagnosis(ep: Episode, at: str, source: str) -> list[Group]:
    """A diagnosis worth +0.20 once, with no partial credit (keyword-decided: inferred)."""
    if at == "diagnose" and "diagnose_correct" not in ep.tags:
        return [_maybe(Component("diagnosis", 0.20, source, tag="diagnose_correct", inferred=True))]
    return []


def _security(ep: Episode, at: str, svc: str, a: dict[str, Any]) -> list[Group]:
    groups = _gather(ep, at, svc)
    groups += _runbook(ep, at, a, "security_incident.md", "runbook_security",
                       "task_security.py:162-166")
    groups += _one_diagnosis(ep, at, "task_security.py:168-173")
    if at == "block_ip_range":
        ip_range = str(a.get("ip_range") or "")
        if "185" not in ip_range:
            groups.append([[Component("wrong block", -0.10, "task_security.py:187-189")]])
        elif "fix_block" not in ep.tags:
            fix = [_two_fixes(ep, Component("fix: block", 0.30, "task_security.py:175-186",
                                            tag="fix_block"), "fix_alert")]
            if ip_range in ("185.0.0.0/8", "185.220.0.0/16"):
                fix.append(Component("exact range", 0.10, "task_security.py:175-186"))
            groups.append([fix])
    if at == "alert_oncall" and "fix_alert" not in ep.tags:
        fix = Component("fix: page security", 0.20, "task_security.py:191-201", tag="fix_alert",
                        inferred=True)
        groups.append(_maybe(_two_fixes(ep, fix, "fix_block")))
    groups += _wrong_fix(ep, at)
    groups.append(_late_noop(ep, at, 5, -0.03, "task_security.py:211-212"))
    groups.append(_not_applicable(at, ("create_index", "failover"), "task_security.py:215-217"))
    return groups


def _database(ep: Episode, at: str, svc: str, a: dict[str, Any]) -> list[Group]:
    groups = _gather(ep, at, svc)
    if at == "read_runbook":
        groups.append(_once(ep, "runbook_any", "runbook read", 0.05, "task_database.py:174-176"))
    groups += _one_diagnosis(ep, at, "task_database.py:178-183")
    if at == "create_index":
        right = a.get("table") == "orders" and "user_segment" in str(a.get("column") or "")
        if not right:
            groups.append([[Component("wrong index", -0.10, "task_database.py:195-197")]])
        elif "fix_index" not in ep.tags:
            groups.append([[Component("fix: index", 0.30, "task_database.py:185-194",
                                      tag="fix_index", resolves=True)]])
    if at == "rollback" and svc == "postgres-primary" and "fix_index" not in ep.tags:
        groups.append([[Component("fix: rollback", 0.20, "task_database.py:199-205",
                                  tag="fix_index", resolves=True)]])
    groups += _wrong_fix(ep, at)
    groups.append(_late_noop(ep, at, 5, -0.03, "task_database.py:215-216"))
    groups.append(_not_applicable(at, ("block_ip_range", "failover"), "task_database.py:219-221"))
    return groups


FAILOVER_TARGETS = {"api-gateway": ("fail_api", 0.12), "order-service": ("fail_order", 0.12),
                    "cdn-service": ("fail_cdn", 0.10), "redis-cache": ("fail_redis", 0.10)}
FAILOVER_FORBIDDEN = {"payment-service": "fail_pay", "postgres-primary": "fail_pg"}
FAILOVER_RESOLVED = ("fail_api", "fail_cdn", "fail_order", "fail_redis", "alert_team")
"""task_failover.py:242-248: resolved (and done) on every step once all these are paid."""


def _failover_move(ep: Episode, svc: str, a: dict[str, Any]) -> Group:
    if "us-west-2" not in str(a.get("target_region") or ""):
        return [[Component("bad region", -0.05, "task_failover.py:186-188")]]
    if svc in FAILOVER_TARGETS:
        tag, amount = FAILOVER_TARGETS[svc]
        return _once(ep, tag, f"fix: failover {svc}", amount, "task_failover.py:189-220")
    if svc in FAILOVER_FORBIDDEN:
        return _once(ep, FAILOVER_FORBIDDEN[svc], "forbidden failover", -0.25,
                     "task_failover.py:221-228")
    return [[Component("no such failover", -0.05, "task_failover.py:229-231")]]


def _failover(ep: Episode, at: str, svc: str, a: dict[str, Any]) -> list[Group]:
    groups = _gather(ep, at, svc)
    if at == "read_metrics":
        groups.append(_once(ep, "rm_any", "metrics read", 0.05, "task_failover.py:167-169"))
    groups += _runbook(ep, at, a, "failover_procedures.md", "runbook_failover",
                       "task_failover.py:171-175")
    groups += _one_diagnosis(ep, at, "task_failover.py:177-182")
    if at == "failover":
        groups.append(_failover_move(ep, svc, a))
    if at == "alert_oncall" and "alert_team" not in ep.tags and semantic_match(
        str(a.get("reason") or "").lower(), ["payment", "postgres", "database"]
    ):
        groups.append([[Component("fix: page the teams", 0.15, "task_failover.py:233-240",
                                  tag="alert_team")]])
    if at in ("restart_service", "rollback"):
        groups.append([[Component("timed out", -0.05, "task_failover.py:250-252")]])
    groups.append(_late_noop(ep, at, 5, -0.03, "task_failover.py:254-255"))
    groups.append(_not_applicable(at, ("block_ip_range", "create_index"),
                                  "task_failover.py:258-260"))
    return groups


def _generated(ep: Episode, at: str, svc: str, a: dict[str, Any]) -> list[Group]:
    groups: list[Group] = []
    if at == "read_logs" and "read_logs" not in ep.tags:  # the affected service: inferred
        groups.append(_maybe(Component("logs read", 0.10, "task_generated.py:127-131",
                                       tag="read_logs", inferred=True)))
    if at != "diagnose" and "fix" not in ep.tags:  # the ground-truth fix on the affected service
        groups.append(_maybe(Component("fix", 0.45, "task_generated.py:140-149", tag="fix",
                                       resolves=True, inferred=True)))
    return groups


RULES = {"easy": _easy, "medium": _medium, "hard": _hard, "bonus": _bonus,
         "security": _security, "database": _database, "failover": _failover,
         "generated": _generated}
"""The task step functions restated, by ARIA task id."""

UNEXPLAINED = "unexplained"


def _pick(groups: list[Group], reward: float) -> tuple[list[Component], bool]:
    """The first combination of alternatives whose sum rounds to ``reward``, and whether one
    did; with none, the certain components alone."""
    options = [g for g in groups if g]
    for choice in itertools.product(*options):
        components = [c for alternative in choice for c in alternative]
        if abs(round(sum(c.amount for c in components), 4) - reward) < 5e-5:
            return components, True
    certain = [c for g in options if len(g) == 1 for c in g[0]]
    return certain, False


def split_step(ep: Episode, action: dict[str, Any], reward: float) -> dict[str, Any]:
    """Split one answered step's ``reward`` and advance ``ep`` (ARIA's step counter, tags).

    Returns ``{aria_step, components[{name, amount, source, kind, inferred}], explained,
    resolves}``; ``explained`` is False when no reading of the rules gives ``reward`` (an
    ``unexplained`` component then holds the difference, sourced ``recorded reward``). Steps
    the server failed are not split (they are not steps of ARIA's episode, see
    ``aria-scoring`` §2.9). An unknown task id gives one unexplained component.
    """
    ep.step += 1
    at = str(action.get("action_type") or "")
    svc = str(action.get("service") or "")
    rule = RULES.get(ep.task_id)
    groups = rule(ep, at, svc, action) if rule else []
    components, explained = _pick(groups, reward)
    rest = round(reward - sum(c.amount for c in components), 4)
    if not explained and abs(rest) >= 5e-5:
        components = [*components, Component(UNEXPLAINED, rest, "recorded reward")]
    for c in components:
        if c.tag:
            ep.tags.add(c.tag)
    resolves = any(c.resolves for c in components) or (
        ep.task_id == "failover" and all(t in ep.tags for t in FAILOVER_RESOLVED))
    return {"aria_step": ep.step, "components": [c.as_dict() for c in components],
            "explained": explained or abs(rest) < 5e-5, "resolves": resolves}
