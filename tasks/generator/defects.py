"""Existing rules that misbehave: the rules repairs start from, and the postmortems that report them.

A repair requirement (seed spec, "Repairs and postmortems") names an existing rule and a
seeded defect. :func:`apply_defect` turns the correct rule into the one the repo ships;
:data:`POSTMORTEMS` describes each defect's symptom, never its fix, in four paraphrases.
"""

from __future__ import annotations

import copy
import re

from tasks.generator.world import SLI_FAMILIES, Service

RUNBOOK_BASE = "https://runbooks.example.internal"

RATIO_DEFECTS = ("per-pod", "missing-for", "threshold-low", "no-threshold")
"""Defects an error-ratio alert can ship with."""
DOWN_DEFECTS = ("per-pod", "for-too-long", "wrong-team")
"""Defects a Down alert (``up`` == 0) can ship with."""

TOO_LONG_FOR = "30m"
"""The ``for`` of a ``for-too-long`` Down alert: longer than the outages it must page for."""


def ratio_rule(name: str, threshold: float, for_s: int, labels: dict, *, service: str | None = None,
               family: str = "http", window: str = "5m", summary: str | None = None) -> dict:
    """An error-ratio alert: failed over all requests over ``window``, above ``threshold``.

    ``service=None`` gives a generic rule (one alert per service, like HighErrorRatio);
    ``threshold`` is a ratio (0.1 = 10%), ``for_s`` seconds (0: no ``for``).
    """
    fam = SLI_FAMILIES[family]
    sel = f',service="{service}"' if service else ""
    total_sel = f'{{service="{service}"}}' if service else ""
    rule = {
        "alert": name,
        "expr": f'sum by (service) (rate({fam["metric"]}{{{fam["error_selector"]}{sel}}}[{window}]))\n/\n'
                f"sum by (service) (rate({fam['metric']}{total_sel}[{window}])) > {threshold:g}\n",
    }
    if for_s:
        rule["for"] = f"{for_s // 60}m"
    rule["labels"] = dict(labels)
    rule["annotations"] = {"summary": summary or
                           f"{{{{ $labels.service }}}} serves more than {threshold * 100:g}% errors"}
    return rule


def down_rule(svc: Service, *, for_s: int = 120, team: str | None = None, absent: bool = False,
              name: str | None = None) -> dict:
    """``<Service>Down``: every target of the service is down for ``for_s`` seconds.

    ``absent=True`` also pages when the service's ``up`` series are gone altogether
    (``absent()``: the pods vanished from service discovery), which ``== 0`` cannot see.
    """
    expr = f'sum by (service) (up{{service="{svc.name}"}}) == 0'
    if absent:
        expr = f'({expr})\nor\nabsent(up{{service="{svc.name}"}})\n'
    return {
        "alert": name or f"{svc.camel}Down",
        "expr": expr,
        "for": f"{for_s // 60}m",
        "labels": {"severity": "page", "team": team or svc.team},
        "annotations": {"summary": f"{svc.name} is down",
                        "runbook_url": f"{RUNBOOK_BASE}/down/{svc.name}"},
    }


def apply_defect(rule: dict, defect: str, *, old_team: str | None = None) -> dict:
    """The shipped (broken) version of a correct ``rule``; the argument is not modified.

    ``per-pod``: aggregates by pod as well (one alert per replica; a Down alert compares each
    target's ``up`` instead of the service's sum); ``missing-for``: no ``for`` (flaps on every
    blip); ``threshold-low``: a tenth of the threshold; ``no-threshold``: the error rate with
    no comparison at all (fires whenever there is one error); ``for-too-long``: a ``for``
    longer than real outages (:data:`TOO_LONG_FOR`); ``wrong-team``: the ``team`` label still
    names ``old_team``.

    Raises:
        ValueError: an unknown defect, or one that does not apply to this rule.
    """
    out = copy.deepcopy(rule)
    expr = out["expr"]
    if defect == "per-pod":
        selector = re.search(r"sum by \(service\) \((up\{[^}]*\})\) == 0", expr)
        if selector:
            out["expr"] = f"{selector.group(1)} == 0\n"
        else:
            out["expr"] = expr.replace("sum by (service)", "sum by (service, pod)")
    elif defect == "missing-for":
        out.pop("for", None)
    elif defect in ("threshold-low", "no-threshold"):
        head, sep, threshold = expr.rstrip("\n").rpartition(" > ")
        if not sep:
            raise ValueError(f"{rule['alert']}: no threshold to change")
        if defect == "threshold-low":
            out["expr"] = f"{head} > {float(threshold) / 10:g}\n"
        else:
            out["expr"] = head.split("\n/\n")[0] + "\n"
    elif defect == "for-too-long":
        out["for"] = TOO_LONG_FOR
    elif defect == "wrong-team":
        if not old_team:
            raise ValueError("wrong-team needs the old team")
        out["labels"]["team"] = old_team
    else:
        raise ValueError(f"unknown defect {defect!r}")
    if out == rule:
        raise ValueError(f"defect {defect!r} does not change {rule['alert']}")
    return out


def duplicate_copy(rule: dict) -> dict:
    """A stale copy of ``rule`` left in a legacy file: same name and condition, but it pages."""
    out = copy.deepcopy(rule)
    out["labels"]["severity"] = "page"
    out["labels"].pop("team", None)
    return out


POSTMORTEMS: dict[str, list[str]] = {
    "per-pod": [
        ("During the {service} incident on-call got one {alert} notification for every replica "
         "and had to close them one by one."),
        ("A single {service} problem opened several identical {alert} alerts at once; the only "
         "difference between them was which pod they named."),
        ("Notification volume tripled during the {service} degradation: {alert} reported the same "
         "problem again and again, once per instance."),
        ("Scaling {service} up made the {alert} storm worse: more replicas, more copies of the "
         "same notification for one incident."),
    ],
    "missing-for": [
        ("{alert} opened and closed a dozen times overnight for {service}; each time the error "
         "ratio touched the threshold for a single evaluation."),
        ("The queue filled with {alert} entries for {service} that resolved a minute later. "
         "Nobody could tell the real incident from the blips."),
        ("{service} had a few seconds of errors during a deploy and {alert} fired immediately, "
         "then again at the next deploy, and the next."),
        ("{alert} for {service} flaps: firing, resolved, firing again, every few minutes on an "
         "ordinary afternoon."),
    ],
    "threshold-low": [
        ("{alert} has been firing for days on {service} although the service is healthy; people "
         "have started to ignore it."),
        ("Every {alert} notification this month for {service} was closed as 'no action needed': "
         "the error ratio was well within normal."),
        ("On-call muted their {alert} notifications: it fires for {service} at error ratios nobody "
         "considers a problem."),
        ("{alert} fires for {service} on a normal Tuesday. Its graphs show the usual background "
         "of failed requests and nothing else."),
    ],
    "no-threshold": [
        ("{alert} for {service} has been firing without a break since it was added, through "
         "quiet nights and incidents alike."),
        ("Nobody remembers {alert} for {service} resolving. It fires as soon as a single request "
         "fails, and some request always fails."),
        ("{alert} is permanently red on the dashboard for {service}, so when the real outage came "
         "it told on-call nothing new."),
        ("The {service} team asked what {alert} is for: it fires at 0.1% errors exactly like at "
         "50%, so it cannot tell them anything."),
    ],
    "duplicate": [
        ("One {service} outage paged twice: two notifications named {alert}, one a page and one a "
         "ticket, for the same problem."),
        ("On-call acknowledged {alert} for {service} and was paged again a minute later by a "
         "second {alert} with slightly different labels."),
        ("Every {alert} incident for {service} arrives in pairs; the duplicate goes to the wrong "
         "place and nobody knows who owns it."),
        ("{alert} for {service} notifies two channels with two different severities; the team "
         "cannot tell which one is meant."),
    ],
    "for-too-long": [
        ("{service} was completely down for 25 minutes on Sunday and nobody was paged; {alert} "
         "only showed up as pending on the dashboard."),
        ("Customers reported the {service} outage before we did. {alert} never fired although every "
         "target was down the whole time."),
        ("A 20-minute total outage of {service} went unnoticed until the morning: {alert} was "
         "still waiting when the service came back."),
        ("{alert} for {service} has not fired once this year, including during two full outages."),
    ],
    "wrong-team": [
        ("{alert} for {service} still pages a team that no longer owns it; they forward every "
         "page by hand to the new owners."),
        ("The new owners of {service} learned about its outage from the previous team, who "
         "received the {alert} page."),
        ("{alert} for {service} arrives at the old team's pager since the reorg; the on-call "
         "handbook and the alert disagree about who owns the service."),
        ("Pages for {service} ({alert}) keep reaching people who handed the service over a month "
         "ago."),
    ],
    "label-typo": [
        ("{team}'s pages have been landing in the default chat channel since the last "
         "Alertmanager change; the team was never paged."),
        ("An outage owned by {team} sat unacknowledged for an hour: the page went to the "
         "catch-all channel instead of their pager."),
        ("Nobody on {team} received a page this week, although their alerts fired; the audit "
         "log shows them all, routed to the default receiver."),
        ("Alerts labelled team={team} fall through every route since the routing file was last "
         "edited."),
    ],
    "missing-down": [
        ("{service} was completely down for 25 minutes and nobody was paged: its error-ratio "
         "alerts had nothing to compute once the service stopped serving."),
        ("When {service}'s pods disappeared, its dashboards went blank and its alerts went quiet; "
         "customers told us first."),
        ("During the {service} outage every request metric vanished, so the error-ratio alerts "
         "evaluated to nothing and stayed silent."),
        ("{service} dropped out of service discovery after a bad deploy. No series, no alert, no "
         "page, for 40 minutes."),
    ],
}
"""Symptoms, never the fix, four paraphrases per defect (seed spec, "Repairs and postmortems").

Placeholders: ``{alert}``, ``{service}``, ``{team}``."""


def postmortem(number: str, title: str, defect: str, seed: int, action: str, **names: str) -> str:
    """A postmortem file: the symptom of ``defect`` (paraphrase chosen by ``seed``) and one
    action item that states the goal, not the fix."""
    texts = POSTMORTEMS[defect]
    return "\n".join([
        f"# {number}: {title}",
        "",
        "## What happened",
        "",
        texts[seed % len(texts)].format(**names),
        "",
        "## Action items",
        "",
        f"- {action}",
        "",
    ])


HIGH_ERROR_RATIO_ACTION = ("Make HighErrorRatio behave; it should still open a ticket when a "
                           "service serves more than 10% errors for 10 minutes.")
"""The action item of a postmortem that reports a HighErrorRatio defect (the goal, not the fix)."""


def high_error_ratio_postmortem(req: dict, seed: int) -> str:
    """The postmortem of a HighErrorRatio repair requirement ``req`` (its ``postmortem``
    number, ``defect`` and ``service``): the defect's symptom, paraphrase chosen by ``seed``."""
    return postmortem(req["postmortem"], "HighErrorRatio", req["defect"], seed,
                      HIGH_ERROR_RATIO_ACTION, alert="HighErrorRatio", service=req["service"])


def down_repair(rid: str, svc: Service, defect: str, **extra) -> dict:
    """A repair requirement on ``svc``'s Down alert (``up`` == 0 for 2m, page to its team),
    shipped with ``defect``; ``extra`` adds fields (``postmortem``...)."""
    return {
        "id": rid,
        "kind": "repair",
        "weight": 3,
        "alert": f"{svc.camel}Down",
        "service": svc.name,
        "condition": {"type": "down"},
        "for_s": 120,
        "labels": {"severity": "page", "team": svc.team},
        "annotations": {"summary": {"present": True}},
        "defect": defect,
        "title": f"Repair {svc.camel}Down",
        **extra,
    }


def high_error_ratio_repair(rid: str, svc: Service, defect: str, postmortem: str | None,
                            title: str = "Repair HighErrorRatio") -> dict:
    """A repair requirement on the generic HighErrorRatio ticket (over 10% errors for 10m,
    judged on ``svc``, an http service), shipped with ``defect``."""
    return {
        "id": rid,
        "kind": "repair",
        "weight": 3,
        "alert": "HighErrorRatio",
        "service": svc.name,
        "generic": True,
        "condition": {"type": "ratio", "window_min": 5},
        "threshold": 0.1,
        "for_s": 600,
        "labels": {"severity": "ticket"},
        "annotations": {"summary": {"present": True}},
        "defect": defect,
        "postmortem": postmortem,
        "title": title,
    }
