"""Receiver resolution through the real amtool (grader/routing.py).

Uses ``fixtures/cases/routing-continue`` (copied from ../shared/cases): sibling routes
with ``continue: true``, and a matching ``continue`` child hiding the root receiver.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from grader.routing import (
    RoutingError,
    amtool_argv,
    amtool_command,
    check_config,
    resolve_many,
    resolve_receivers,
)

pytestmark = pytest.mark.skipif(shutil.which("amtool") is None, reason="amtool not installed")

CASE = Path(__file__).parent / "fixtures" / "cases" / "routing-continue" / "alertmanager.yml"

# EXPECT.md of routing-continue: label set -> receivers amtool prints.
EXPECTED = [
    ({"notify": "chat", "notify_team": "data"}, ["chat-oncall", "chat-data"]),
    ({"team": "billing"}, ["audit-log"]),
    ({"team": "search"}, ["default-slack"]),
]

BROKEN_RECEIVER = """\
route:
  receiver: default-slack
  routes:
  - {matchers: ['team="billing"'], receiver: nope}
receivers: [{name: default-slack}]
"""


@pytest.mark.parametrize("labels, receivers", EXPECTED)
def test_routing_continue_matches_expect(labels, receivers):
    got = resolve_receivers(CASE, labels)
    assert set(got) == set(receivers)
    assert got == receivers  # amtool's tree order


def test_continue_child_hides_parent_receiver():
    got = set(resolve_receivers(CASE, {"team": "billing"}))
    assert "audit-log" in got and "default-slack" not in got


def test_resolve_many_keeps_order():
    label_sets = [ls for ls, _ in EXPECTED] * 3
    assert resolve_many(CASE, label_sets, max_workers=4) == [r for _, r in EXPECTED] * 3
    assert resolve_many(CASE, []) == []


def test_duplicates_kept(tmp_path):
    cfg = tmp_path / "dup.yml"
    cfg.write_text(
        "route:\n  receiver: a\n  routes:\n"
        "  - {matchers: [x=1], receiver: b, continue: true}\n"
        "  - {matchers: [x=~1|2], receiver: b}\n"
        "receivers: [{name: a}, {name: b}]\n"
    )
    assert resolve_receivers(cfg, {"x": "1"}) == ["b", "b"]


def test_broken_config_raises_with_amtool_message(tmp_path):
    cfg = tmp_path / "broken.yml"
    cfg.write_text(BROKEN_RECEIVER)
    with pytest.raises(RoutingError) as info:
        resolve_receivers(cfg, {"team": "billing"})
    msg = str(info.value)
    assert 'undefined receiver "nope" used in route' in msg
    assert "Warning:" not in msg
    assert "amtool config routes test" in msg  # the command to reproduce


def test_yaml_error_and_missing_file(tmp_path):
    cfg = tmp_path / "bad.yml"
    cfg.write_text("route:\n  receiver: r\n receivers: [{name: r}]\n")
    with pytest.raises(RoutingError, match="yaml"):
        resolve_receivers(cfg, {"a": "b"})
    with pytest.raises(RoutingError, match="not found"):
        resolve_receivers(tmp_path / "missing.yml", {"a": "b"})
    unknown = tmp_path / "unknown.yml"
    unknown.write_text(
        "route: {receiver: r}\nreceivers: [{name: r}]\ninhibit_rules: [{bogus: 1}]\n"
    )
    with pytest.raises(RoutingError, match="field bogus not found"):
        resolve_receivers(unknown, {})


def test_check_config(tmp_path):
    assert check_config(CASE) is None
    cfg = tmp_path / "broken.yml"
    cfg.write_text(BROKEN_RECEIVER)
    err = check_config(cfg)
    assert err is not None and 'undefined receiver "nope"' in err
    unknown = tmp_path / "unknown.yml"
    unknown.write_text(
        "route: {receiver: r}\nreceivers: [{name: r}]\ninhibit_rules: [{bogus: 1}]\n"
    )
    err = check_config(unknown)
    assert err is not None and "field bogus not found" in err


TRICKY = {
    "team": "billing",
    "note": 'it\'s "quoted", with, commas',
    "path": "C:\\dir\\n",
    "spaced": "  padded  ",
    "empty": "",
    "multi": "line1\nline2",
}


def test_amtool_command_reruns_in_a_shell():
    for labels in [ls for ls, _ in EXPECTED] + [TRICKY]:
        cmd = amtool_command(CASE, labels)
        assert cmd.startswith("amtool config routes test --config.file=")
        proc = subprocess.run(cmd, shell=True, capture_output=True, text=True, check=True)
        assert proc.stdout.strip().split(",") == resolve_receivers(CASE, labels)


def test_label_values_arrive_intact(tmp_path):
    # Each tricky value routes to its own receiver only if amtool parsed it exactly.
    routes = "".join(
        f"  - {{matchers: ['{name}=~\"{_re_literal(value)}\"'], receiver: r_{name}, continue: true}}\n"
        for name, value in TRICKY.items()
    )
    cfg = tmp_path / "exact.yml"
    receivers = ", ".join(f"{{name: r_{n}}}" for n in TRICKY)
    cfg.write_text(
        f"route:\n  receiver: root\n  routes:\n{routes}receivers: [{{name: root}}, {receivers}]\n"
    )
    assert check_config(cfg) is None, check_config(cfg)
    assert resolve_receivers(cfg, TRICKY) == [f"r_{n}" for n in TRICKY]


def _re_literal(value: str) -> str:
    """A regex matching exactly ``value``, written inside a double-quoted matcher
    inside a single-quoted YAML string."""
    out = []
    for ch in value:
        if ch == "\n":
            out.append("\\n")  # matcher escape -> newline, a literal newline for RE2
        elif ch == '"':
            out.append('\\"')
        elif ch == "'":
            out.append("''")  # YAML single-quote escape
        elif ch == "\\":
            out.append("\\\\\\\\")  # matcher \\\\ -> \\ -> RE2 literal backslash
        elif not ch.isalnum() and ch != " ":
            out.append("\\" + ch)
        else:
            out.append(ch)
    return "".join(out)


def test_invalid_label_name_and_value():
    with pytest.raises(RoutingError, match="invalid label name"):
        amtool_argv(CASE, {"bad-name": "x"})
    with pytest.raises(RoutingError, match="must be a string"):
        amtool_argv(CASE, {"n": 1})  # type: ignore[dict-item]


def test_amtool_missing_and_timeout(tmp_path):
    with pytest.raises(RoutingError, match="not found"):
        resolve_receivers(CASE, {"a": "b"}, amtool=str(tmp_path / "no-such-amtool"))
    slow = tmp_path / "slow-amtool"
    slow.write_text("#!/bin/sh\nexec sleep 5\n")
    slow.chmod(slow.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(RoutingError, match="timed out"):
        resolve_receivers(CASE, {"a": "b"}, amtool=str(slow), timeout=0.3)
    assert os.path.exists(slow)
