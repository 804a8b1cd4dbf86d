"""The grader's probe table, case roles and cache, pinned without the bundled corpus's weight."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract.errors import BadInput
from contract.paths import TASKS_DIR, task_dirs
from contract.version import DATASET_VERSION
from grader import promtool
from grader.cache import GradeCache
from grader.grade import Grader, load_catalog
from grader.probes import PROBES
from grader.score import case_role
from tasks.generator.checks import ROLES

try:  # works whether or not tests/ is a package
    from tests.test_cases import make_task
except ImportError:  # pragma: no cover
    from test_cases import make_task


def test_every_probe_kind_of_the_bundled_catalogs_has_a_probe():
    kinds = {check["probe"]["type"] for task in task_dirs(TASKS_DIR)
             for check in json.loads((task / "tests" / "checks.json").read_text())["checks"]}
    assert kinds <= set(PROBES), sorted(kinds - set(PROBES))


def test_probe_table_cannot_be_changed_at_run_time():
    with pytest.raises(TypeError):
        PROBES["bogus"] = PROBES["syntax"]  # type: ignore[index]


def test_unknown_probe_kind_is_bad_input_naming_the_catalog(tmp_path):
    check = {"id": "A1.odd", "family": "Fire", "label": "odd", "probe": {"type": "bogus"}}
    task, ws = make_task(tmp_path, "groups: []\n", [], [check], "Nothing")
    with pytest.raises(BadInput, match="unknown probe type 'bogus'") as info:
        Grader().grade_result(task, ws, pristine={})
    assert "checks.json" in str(info.value)


@pytest.mark.parametrize(("check_id", "kind", "role"), [
    ("R1.route.positive1", "route", "positive"),
    ("R1.route.chain", "route", "positive"),
    ("R1.route.receiver", "route", "positive"),
    ("R1.route.negative12", "route", "negative"),
    ("R1.route.other", "route", None),
    ("IN.inhibit.suppressed.HighErrorRatio", "inhibit", "suppressed"),
    ("IN.inhibit.not-suppressed.reversed", "inhibit", "not-suppressed"),
    ("IN.inhibit.bystander.other-service", "inhibit", "bystander"),
    ("IN.inhibit.suppressed", "inhibit", None),  # the last part names the case, not the role
    ("IN.inhibit.positive1", "inhibit", None),
    ("A1.route.positive1", "alert", None),
])
def test_case_role_is_read_from_the_check_id(check_id, kind, role):
    assert case_role(check_id, kind) == role


def test_every_bundled_check_carries_its_role_and_it_agrees_with_the_old_spelling():
    """Roles moved from the check ids into the catalog (issue 14): on the bundled catalogs the
    role read from the catalog is the one the ids gave, so the scores did not move."""
    kinds = {}
    for task in task_dirs(TASKS_DIR):
        catalog = load_catalog(task)
        assert catalog["catalog_version"] == DATASET_VERSION
        req_kind = {r["id"]: r["kind"] for r in catalog["requirements"]}
        for check in catalog["checks"]:
            kind = req_kind.get(check["req"], "")
            assert check["role"] in ROLES, check["id"]
            if kind in ("route", "inhibit"):
                assert case_role(check["id"], kind, check["role"]) == case_role(check["id"], kind)
                assert check["role"] == case_role(check["id"], kind), check["id"]
            kinds.setdefault(check["role"], set()).add(check["family"])
    assert kinds["negative"] == {"Route"} and kinds["bystander"] == {"Inhibit"}
    assert kinds["preservation"] == {"Preservation"} and "Fire" in kinds["requirement"]


def test_the_catalog_role_wins_over_the_id():
    assert case_role("R1.route.negative-x", "route", "positive") == "positive"
    assert case_role("I1.inhibit.anything.X", "inhibit", "bystander") == "bystander"
    assert case_role("R1.route.positive1", "route", "requirement") is None
    assert case_role("A1.fire.outage@75m", "alert", "requirement") is None


def test_grade_cache_replays_once_per_content_and_drops_the_oldest(tmp_path, monkeypatch):
    calls: list[str] = []
    monkeypatch.setattr(promtool, "run_tests", lambda path: calls.append(path.read_text()) or [])
    cache = GradeCache(replay_size=2)

    def test_file(name: str, text: str) -> Path:
        path = tmp_path / name / "test.yml"
        (path.parent / "rules").mkdir(parents=True)
        path.write_text(text)
        return path

    first, second, third = (test_file(n, n) for n in ("a", "b", "c"))
    cache.replay(first)
    cache.replay(first)
    cache.replay(second)
    assert calls == ["a", "b"]
    cache.replay(third)  # full: "a" goes
    cache.replay(second)
    cache.replay(first)
    assert calls == ["a", "b", "c", "a"]
    cache.clear_replays()
    cache.replay(third)
    assert calls == ["a", "b", "c", "a", "c"]
