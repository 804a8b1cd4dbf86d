"""The generator is deterministic (the bundled tasks are exactly what it writes) and the corpus
has the shape issue 4 asks for: 5 workflows x 3 tiers x 2 seeds, check counts sized by tier."""

from __future__ import annotations

import json
from pathlib import Path

from contract.paths import TASKS_DIR, task_dirs
from tasks.generator.generate import CORPUS, generate
from tasks.generator.scenarios import expand_notation, read_notation


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_regenerating_gives_the_committed_tasks_byte_for_byte(tmp_path):
    written = generate(tmp_path / "a")
    assert [p.name for p in written] == [p.name for p in task_dirs(TASKS_DIR)]
    for task in written:
        assert _files(task) == _files(TASKS_DIR / task.name), task.name


def test_a_master_seed_gives_a_fresh_reproducible_set_of_any_size(tmp_path):
    first = generate(tmp_path / "a", master_seed=7, workflows=["slo-onboarding", "latency-slo"],
                     per_tier=1)
    second = generate(tmp_path / "b", master_seed=7, workflows=["slo-onboarding", "latency-slo"],
                      per_tier=1)
    assert len(first) == 6 and [_files(p) for p in first] == [_files(p) for p in second]
    bundled = {p.name for p in task_dirs(TASKS_DIR)}
    assert not bundled & {p.name for p in first}
    assert all(p.name.startswith("af-m7-") for p in first)  # no short id (af-001) shared either
    rows = [json.loads(line) for line in (tmp_path / "a" / "manifest.jsonl").read_text().splitlines()]
    assert sorted((r["workflow"], r["tier"]) for r in rows) == sorted(
        (w, t) for w in ("slo-onboarding", "latency-slo") for t in ("easy", "medium", "hard"))


def test_the_corpus_is_five_workflows_by_three_tiers_by_two_seeds_sized_by_tier():
    rows = [json.loads(line) for line in (TASKS_DIR / "manifest.jsonl").read_text().splitlines()]
    assert len(rows) == 30
    assert {(r["workflow"], r["tier"], r["seed"]) for r in rows} == set(CORPUS)
    bounds = {"easy": (60, 90), "medium": (115, 170), "hard": (170, 225)}
    for row in rows:
        lo, hi = bounds[row["tier"]]
        assert lo <= row["check_count"] <= hi, (row["id"], row["check_count"])
    hard_manifests = [r for r in rows if r["rules_format"] == "PrometheusRule"]
    assert hard_manifests and all(r["tier"] == "hard" for r in hard_manifests)


def test_every_workflow_has_repairs_and_postmortems_state_symptoms_not_fixes():
    repaired: set[str] = set()
    for task in task_dirs(TASKS_DIR):
        spec = json.loads((task / "tests" / "spec.json").read_text())
        if any(r["kind"] == "repair" for r in spec["requirements"]):
            repaired.add(spec["workflow"])
        folder = task / "environment" / "monitoring" / "postmortems"
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else []:
            text = path.read_text()
            assert "for:" not in text and "sum by" not in text and "absent(" not in text, path
    assert repaired == {json.loads(line)["workflow"]
                        for line in (TASKS_DIR / "manifest.jsonl").read_text().splitlines()}


def test_one_workflow_can_be_generated_alone_with_its_corpus_numbers(tmp_path):
    written = generate(tmp_path / "one", workflows=["slo-onboarding"])
    assert [p.name for p in written] == [p.name for p in task_dirs(TASKS_DIR)][:6]


def test_missing_samples_are_written_as_stale_then_gaps_and_round_trip():
    values = [0.0, 5.0, 10.0, 15.0, None, None, None, 0.0, 5.0, 10.0]
    text = expand_notation(values)
    assert text == "0+5x3 stale _ _ 0+5x2"
    assert read_notation(text) == values
