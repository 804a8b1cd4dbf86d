"""A run's own page, ``runs/<run-id>.html``: the run view with its first step written in the HTML.

The run view (``site/static/js/pages/run.js``) draws a run's first step from its head file
(``data/run-heads/<id>.json``) once the page's bundle and the head are in. A run's own page holds
what that first draw puts in the first screen (the header, the step controls' values, the step's
detail and the checks panel with its first rows), made here from the same head, so the browser
paints the step from the HTML alone; the run view then draws the same elements over it after the
first frame and goes on as on ``run.html?run=<id>``. :func:`first_screen` is that first draw
written again in Python, value for value (the functions name the JS they follow; numbers and
texts take JavaScript's forms through :mod:`exporter.js_text`, and texts the HTML parser would
change are kept by :func:`_as_html_text`); ``tests/test_run_page.py`` compares the two DOMs on
the fixture runs.

Only an alerting run's first step (``n`` 0, the pristine repository) is written: an episode's
first step is its board, and a run with a model's turns or ATIF parts draws blocks from chunks
of their own; those runs' pages are the run view's shell (:func:`first_screen` answers None).
"""

from __future__ import annotations

import re
from typing import Any

from markupsafe import Markup, escape

from exporter.js_text import (
    NOT_SPACE,
    clip,
    encode_uri_component,
    finite,
    form_encode,
    js_string,
    to_fixed,
    trim,
)

EAGER_ROWS = 24
"""Check rows written at most (components/checks.js EAGER_ROWS: the first screens of the panel)."""
PANEL_TEXT = 600
"""The longest detail or cause text a row shows (components/checks.js PANEL_TEXT)."""
STATES = {"1": "pass", "0": "fail", "-": "na"}
MARKS = {"pass": "\u2713", "fail": "\u2717", "na": "\u2013"}
STATE_WORDS = {"pass": "passes", "fail": "fails", "na": "not applicable"}
FLIPS_NAMED = 6
INITIAL_NOTE = "The instruction given to the agent; the grade here is the pristine repo's, before any action."
NO_CHANGE = "No change: the pristine repo, before any action."


def format_reward(value: Any) -> str:
    """lib/format.js ``formatReward``: ``value.toFixed(4)``, an em dash for a non-number."""
    return to_fixed(value, 4) if finite(value) else "\u2014"


def format_delta(value: Any) -> str:
    """lib/format.js ``formatDelta``: ``+0.2400``, ``\u22120.0420``, ``\u00b10.0000``."""
    if not finite(value):
        return ""
    if value > 0:
        return "+" + format_reward(value)
    if value < 0:
        return "\u2212" + format_reward(-value)
    return "\u00b10.0000"


def format_count(value: int) -> str:
    """lib/format.js ``formatCount`` of an integer: ``12,345``."""
    return f"{value:,}"


def has_atif_parts(head: dict[str, Any]) -> bool:
    """pages/run.js ``hasAtifParts``: whether the head has a part the atif chunk draws."""
    return bool(head.get("llm") or head.get("harbor") or head.get("subagents") or any(
        step.get("llm") or step.get("copied") or step.get("section") or step.get("media") or step.get("subagents")
        for step in head.get("steps", [])))


def _header(head: dict[str, Any]) -> dict[str, Any]:
    """pages/run.js ``renderHeader`` drawn from a head."""
    final = head.get("final") or {}
    reward = final.get("reward")
    shown_reward = reward if isinstance(reward, (int, float)) and not isinstance(reward, bool) else head.get("last_total")
    dash = "\u2014"
    status = head.get("status") or "complete"
    incomplete = bool(head.get("status")) and head.get("status") != "complete"
    if not incomplete:
        status_text = ""
    elif head.get("status") == "failed":
        status_text = (f"This run failed: {head.get('error') or 'no reason was recorded'}. Its steps are the ones "
                       "recorded before it stopped; it is left out of the means on the home page.")
    else:
        status_text = ("This run is incomplete: it was interrupted or is still being recorded (the same command "
                       "resumes it). It is left out of the means on the home page.")
    return {
        "title": head["task"]["title"],
        "meta": [("Run", head["run_id"]), ("Task", head["task_id"]), ("Kind", head["kind"]),
                 ("Policy", js_string(head["policy"]) if head.get("policy") is not None else dash),
                 ("Model", js_string(head["model"]) if head.get("model") is not None else dash),
                 ("Seed", js_string(head["seed"]) if head.get("seed") is not None else dash),
                 ("Final reward", format_reward(shown_reward))],
        "solved": final.get("solved") is True,
        "status": status, "status_hidden": not incomplete, "status_text": status_text,
        "instruction": head["task"]["instruction"],
        "step_count": head["step_count"] - 1,
    }


UNLOADED = re.compile(f"^({NOT_SPACE}+)(?: line [0-9]+)? does not load")
UNDEFINED = re.compile(f"defines (?:an alerting rule named )?({NOT_SPACE}+)")
"""lib/roots.js's UNLOADED and UNDEFINED."""


def _roots(failing: list[tuple[str, Any]]) -> dict[str, str]:
    """lib/roots.js ``failureRoots``: check id -> the root it shares (a file that does not load,
    an alert no rule defines), from the failing checks' causes ``[(id, cause or None)]``."""
    unloaded, undefined = UNLOADED, UNDEFINED
    broken = None
    for _, cause in failing:
        if cause and cause.get("kind") == "syntax-error":
            found = unloaded.search(js_string(cause.get("summary") or ""))
            if found and not found[1].startswith("alertmanager"):
                broken = found[1]
                break
    roots = {}
    for check_id, cause in failing:
        if not cause or not isinstance(cause.get("kind"), str):
            continue
        kind, summary = cause["kind"], js_string(cause.get("summary") or "")
        root = None
        if kind == "syntax-error" or kind.endswith("-unloaded"):
            found = unloaded.search(summary)
            root = f"{found[1]} does not load" if found else kind
        elif kind in ("alert-undefined", "preservation-removed"):
            alert = undefined.search(summary)
            root = f"{broken} does not load" if broken else (
                f"no rule defines {alert[1]}" if kind == "alert-undefined" and alert else None)
        if root:
            roots[check_id] = root
    return roots


def _shared_roots(roots: dict[str, str]) -> list[tuple[str, int]]:
    """lib/roots.js ``sharedRoots``: roots two or more checks share, most shared first (stable)."""
    counts: dict[str, int] = {}
    for root in roots.values():
        counts[root] = counts.get(root, 0) + 1
    return sorted(((root, count) for root, count in counts.items() if count > 1), key=lambda item: -item[1])


def _state(states: str, index: int) -> str:
    """components/checks.js ``stepView.state``: "pass", "fail" or "na" of check ``index`` in a
    step's ``checks`` string."""
    return STATES.get(states[index] if index < len(states) else "", "na")


def _cause_at(step: dict[str, Any], check_id: str) -> dict[str, Any] | None:
    """lib/data.js ``causeAt`` at the first step: its cause when it has a text summary."""
    cause = (step.get("causes") or {}).get(check_id)
    return cause if isinstance(cause, dict) and isinstance(cause.get("summary"), str) else None


def _row(check: dict[str, Any], index: int, step: dict[str, Any], changed: set[int], root: str) -> dict[str, Any]:
    """One check row as components/checks.js ``buildRows`` and ``updateEntry`` leave it."""
    state = _state(step.get("checks") or "", index)
    is_changed = index in changed
    label = check.get("label") or check["id"]
    detail = js_string((step.get("failed") or {}).get(check["id"]) or "") if state == "fail" else ""
    cause = _cause_at(step, check["id"]) if state == "fail" else None
    return {
        "id": check["id"], "index": index, "family": check.get("family") or "", "label": label,
        "state": state, "changed": is_changed, "mark": MARKS[state],
        "aria": f"{label}: {STATE_WORDS[state]}{', changed at this step' if is_changed else ''}",
        "detail": clip(detail, PANEL_TEXT), "why": state == "fail",
        "cause": cause is not None, "cause_kind": clip(cause["kind"], 80) if cause else "", "cause_text": clip(cause["summary"], PANEL_TEXT) if cause else "",
        "root": root if state == "fail" else "",
    }


def _checks(task: dict[str, Any], step: dict[str, Any]) -> dict[str, Any]:
    """components/checks.js ``renderChecks`` and ``update``, with checks-filter.js ``update``,
    drawn from a head's task at its first step."""
    requirements = {requirement["id"]: requirement for requirement in task["requirements"]}
    by_index = {check["index"]: check for check in task["checks"]}
    changed = set(step.get("changed") or [])
    states = step.get("checks") or ""

    def state_of(index: int) -> str:
        return _state(states, index)

    failing = [(by_index[index]["id"], _cause_at(step, by_index[index]["id"]))
               for group in task["panel"] for index in group["checks"] if state_of(index) == "fail"]
    roots = _roots(failing)
    groups, turned, left = [], {"red": [], "green": []}, EAGER_ROWS
    for group in task["panel"]:
        requirement = None if group["req"] is None else requirements.get(group["req"]) or {
            "id": group["req"], "title": "", "kind": "", "weight": None}
        checks = [by_index[index] for index in group["checks"]]
        passing = sum(1 for check in checks if state_of(check["index"]) == "pass")
        applicable = sum(1 for check in checks if state_of(check["index"]) != "na")
        for check in checks:
            if check["index"] in changed and state_of(check["index"]) in ("fail", "pass"):
                turned["red" if state_of(check["index"]) == "fail" else "green"].append(check["id"])
        drawn = checks[:max(left, 0)]
        left -= len(checks)
        groups.append({
            "req": "" if requirement is None else js_string(requirement["id"]), "heading": _heading(requirement),
            "count": f"{passing}/{applicable}",
            "fails": sum(1 for check in checks if state_of(check["index"]) == "fail"),
            "changed": sum(1 for check in checks if check["index"] in changed),
            "rows": [_row(check, check["index"], step, changed, roots.get(check["id"], "")) for check in drawn],
            "more": len(drawn) < len(checks),
        })
    return {
        "summary": (f"{states.count('1')}/{len(states) - states.count('-')} pass" if states else "not graded yet"),
        "fail_count": states.count("0"), "changed_count": len(step.get("changed") or []),
        "flips": _flips(step, turned), "roots": _shared_roots(roots), "groups": groups,
        # checks-filter.js requirements(): an id the select holds already ("": all) is left out
        "requirements": [(requirement["id"], trim(f"{js_string(requirement['id'])} {js_string(requirement.get('title') or '')}"))
                         for requirement in task["requirements"] if requirement["id"] != ""],
        "legend_hidden": task["check_count"] == 0,
    }


def _heading(requirement: dict[str, Any] | None) -> dict[str, str] | None:
    """components/checks.js ``groupHeading``'s texts: ``{id, title, tag}`` (tag "" for none),
    None for the group of checks tied to no requirement."""
    if requirement is None:
        return None
    weight = requirement.get("weight")
    kind = requirement.get("kind")
    tag = ""
    if kind:
        tag = js_string(kind) + ("" if weight is None else " \u00b7 w" + js_string(weight))
    return {"id": js_string(requirement["id"]), "title": js_string(requirement.get("title") or ""), "tag": tag}


def _flips(step: dict[str, Any], turned: dict[str, list[str]]) -> str:
    """components/checks-filter.js ``flipsText``."""
    def named(ids: list[str]) -> str:
        more = f" and {len(ids) - FLIPS_NAMED} more" if len(ids) > FLIPS_NAMED else ""
        return ", ".join(ids[:FLIPS_NAMED]) + more
    parts = [f"{len(turned[color])} turned {color} ({named(turned[color])})" for color in ("red", "green") if turned[color]]
    if parts:
        return f"At this step {'; '.join(parts)}."
    return "No check flipped at this step." if step.get("graded") else ""


def _config(config: Any) -> dict[str, list[Any]]:
    """components/detail.js ``renderConfig``'s lists: findings and inhibition version differences."""
    findings = config.get("findings") if isinstance(config, dict) and isinstance(config.get("findings"), list) else []
    differences = (config.get("version_differences") if isinstance(config, dict)
                   and isinstance(config.get("version_differences"), list) else [])
    return {
        "findings": [{"kind": js_string(f.get("kind")), "where": js_string(f.get("where")), "text": js_string(f.get("text"))}
                     for f in findings if isinstance(f, dict)],
        "differences": [{"check": js_string(d.get("check")), "rule": _js_number(d.get("rule")),
                         "verdicts": "; ".join(f"{version} {'mutes' if muted else 'does not mute'} the target"
                                               for version, muted in (d.get("verdicts") or {}).items())}
                        for d in differences if isinstance(d, dict)],
    }


def _js_number(value: Any) -> str:
    """``String(Number(value))`` for the JSON values a run file holds there."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return js_string(value)
    return "NaN"


def first_screen(head: dict[str, Any]) -> dict[str, Any] | None:
    """What a run's own page writes of its first step, from its head (``contract.site.RunHead``
    as JSON values), or None when the page leaves the whole first draw to the run view (an
    episode, a run with a model's turns or ATIF parts, a head without steps or checks, a step
    the head's first is not the initial state of).

    Shape: ``{run_id, step, header, stepper, detail, checks}`` (see the template
    ``_run_content.html``, which writes it into the run view's elements).
    """
    steps = head.get("steps") or []
    if head.get("kind") != "alerting" or not steps or has_atif_parts(head) or head["task"]["check_count"] == 0:
        return None
    step = steps[0]
    if step.get("n") != 0 or step.get("tool") or step.get("diff") or step.get("orphans") or step.get("lazy"):
        return None
    graded = bool(step.get("graded"))
    reward = step.get("reward")
    number = reward if finite(reward) else 0
    trend = "none" if not graded else "up" if number > 0 else "down" if number < 0 else "flat"
    output = step.get("output")
    header = _header(head)
    if header["instruction"].startswith("\n"):  # the parser drops a <pre>'s first line break
        header["instruction"] = "\n" + header["instruction"]
    return _as_html_text({
        "run_id": head["run_id"],
        "permalink": f"{encode_uri_component(head['run_id'])}.html?step=0",
        "compare": f"?a={form_encode(head['run_id'])}",
        "step": 0,
        "header": header,
        "stepper": {"reward": format_reward(step.get("total")), "delta": format_delta(reward) if graded else "not graded",
                    "trend": trend, "rest": f"Loading all {format_count(head['step_count'])} steps\u2026"},
        "detail": {"source": js_string(step.get("source")),
                   "message": INITIAL_NOTE if step.get("source") == "user" else "",
                   "output": None if output is None else _chunks(js_string(output)),
                   "output_long": output is not None and _is_long(js_string(output)),
                   "no_change": NO_CHANGE, "config": _config(step.get("config"))},
        "checks": _checks(head["task"], step),
    })


class _NotWritable(Exception):
    """A text HTML cannot carry as the run view's DOM holds it (a NUL character)."""


def _as_html_text(value: Any) -> Any:
    """``value`` (the first screen) with every text the HTML parser would change kept as the
    run view writes it: a carriage return as ``&#13;`` (the parser turns a written one into a
    line break) in an escaped :class:`markupsafe.Markup`; None when a text holds NUL, which the
    parser drops or replaces (the page then leaves the first draw to the run view)."""
    try:
        return _kept(value)
    except _NotWritable:
        return None


def _kept(value: Any) -> Any:
    if isinstance(value, str):
        if "\x00" in value:
            raise _NotWritable
        return Markup(str(escape(value)).replace("\r", "&#13;")) if "\r" in value else value
    if isinstance(value, dict):
        return {key: _kept(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_kept(item) for item in value)
    return value


LONG_LINES = 4
LONG_CHARS = 360
"""components/detail.js: a text longer than these gets an Expand button."""


def _is_long(text: str) -> bool:
    """components/detail.js ``isLong``: over 360 UTF-16 code units or over 4 line breaks."""
    return len(text.encode("utf-16-le", "surrogatepass")) > 2 * LONG_CHARS or text.count("\n") > LONG_LINES


LINES_PER_CHUNK = 24
"""lib/dom-update.js LINES_PER_CHUNK."""


def _chunks(text: str) -> list[str]:
    """lib/dom-update.js ``chunksOf``: ``text`` cut after every 24th line break."""
    chunks, start, lines = [], 0, 0
    at = text.find("\n")
    while at != -1:
        lines += 1
        if lines >= LINES_PER_CHUNK:
            chunks.append(text[start:at + 1])
            start, lines = at + 1, 0
        at = text.find("\n", at + 1)
    if start < len(text) or not chunks:
        chunks.append(text[start:])
    return chunks
