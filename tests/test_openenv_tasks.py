"""Fresh tasks for the OpenEnv server, in process: the cache, the held-out master seed, and
what reset arguments choose (the server itself: tests/test_openenv.py)."""

from __future__ import annotations

import pytest

from contract.files import read_json
from contract.paths import task_dirs
from contract.task_roots import task_fingerprint
from recorder.environments.openenv_server import fresh_tasks
from recorder.environments.openenv_server.fresh_tasks import MASTER_SEED_ENV, FreshTasks
from recorder.environments.openenv_server.reset_args import choose

WORKFLOW, TIER = "latency-slo", "easy"


def test_same_inputs_are_built_once_and_reused(tmp_path):
    tasks = FreshTasks(tmp_path)
    first = tasks.task("train", WORKFLOW, TIER, 11)
    inode = (first.path / "task.toml").stat().st_ino
    again = FreshTasks(tmp_path).task("train", WORKFLOW, TIER, 11)
    assert again == first and (again.path / "task.toml").stat().st_ino == inode
    assert read_json(first.path / "tests" / "spec.json")["seed"] == 11
    other = tasks.task("train", WORKFLOW, TIER, 12)
    assert task_fingerprint(other.path) != task_fingerprint(first.path)
    assert sorted(p.name for p in (tmp_path / "tasks").iterdir() if not p.name.startswith(".")) \
        == sorted([first.path.name, other.path.name])


def test_the_cache_keeps_at_most_max_tasks_folders_and_never_evicts_a_held_one(tmp_path):
    tasks = FreshTasks(tmp_path, max_tasks=3)
    held = tasks.task("train", WORKFLOW, TIER, 100)  # the oldest, and still held by a session
    for seed in range(101, 107):
        FreshTasks.release(tasks.task("train", WORKFLOW, TIER, seed).path)
        folders = [p for p in (tmp_path / "tasks").iterdir() if not p.name.startswith(".")]
        assert len(folders) <= 3 and held.path in folders
    assert sorted(p.name for p in folders) == sorted(
        [held.path.name] + [tasks.task("train", WORKFLOW, TIER, s).path.name for s in (105, 106)])
    fingerprint = task_fingerprint(held.path)
    FreshTasks.release(held.path)
    for seed in (107, 108):
        FreshTasks.release(tasks.task("train", WORKFLOW, TIER, seed).path)
    assert not held.path.exists()  # let go of, and the least recently used: evicted
    again = tasks.task("train", WORKFLOW, TIER, 100)  # built again, alike
    assert again.path == held.path and task_fingerprint(again.path) == fingerprint


def test_a_cache_bound_below_one_is_refused(tmp_path):
    from contract.errors import BadInput

    with pytest.raises(BadInput, match="must be positive"):
        FreshTasks(tmp_path, max_tasks=0)


def test_a_changed_generator_names_new_folders(tmp_path, monkeypatch):
    before = FreshTasks(tmp_path).task("train", WORKFLOW, TIER, 11).path
    monkeypatch.setattr(fresh_tasks, "generator_version", lambda: "another generator")
    after = FreshTasks(tmp_path).task("train", WORKFLOW, TIER, 11).path
    assert after != before and after.name.split("-")[:-1] == before.name.split("-")[:-1]
    assert task_fingerprint(after) == task_fingerprint(before)


def test_heldout_tasks_come_from_the_master_seed(tmp_path, monkeypatch):
    monkeypatch.delenv(MASTER_SEED_ENV, raising=False)
    one, two = FreshTasks(tmp_path / "a"), FreshTasks(tmp_path / "b")
    held_one = one.task("heldout", WORKFLOW, TIER, 11)
    held_two = two.task("heldout", WORKFLOW, TIER, 11)
    assert held_one.task_id == held_two.task_id == f"af-heldout-{WORKFLOW}-{TIER}-n11"
    seeds = [read_json(t.path / "tests" / "spec.json")["seed"] for t in (held_one, held_two)]
    assert seeds[0] != seeds[1] and min(seeds) >= fresh_tasks.TRAIN_SEED_LIMIT
    assert task_fingerprint(held_one.path) != task_fingerprint(held_two.path)
    assert one.master_seed() == one.master_seed() != two.master_seed()
    monkeypatch.setenv(MASTER_SEED_ENV, "given by the operator")
    given = FreshTasks(tmp_path / "a").task("heldout", WORKFLOW, TIER, 11)
    assert given.path != held_one.path  # another master seed, another cache folder
    assert read_json(given.path / "tests" / "spec.json")["seed"] not in seeds


@pytest.mark.parametrize(("seed", "arguments", "message"), [
    (1, {"tier": "easy", "workflow": "nope"}, "unknown workflow"),
    (1, {"tier": "extreme"}, "tier must be one of"),
    (-1, {}, "seed must be an integer"),
    ("7", {}, "seed must be an integer"),
    (2**32, {}, "seed must be an integer"),
    (1, {"split": "test"}, "split must be one of"),
    (1, {"max_steps": 0}, "max_steps must be a positive integer"),
    (1, {"reward_mode": "dense"}, "reward_mode must be one of"),
    (1, {"task": "af-999-none"}, "unknown task"),
    (1, {"task": "af-001-slo-onboarding-easy-s1", "tier": "hard"}, "come with it"),
])
def test_bad_reset_arguments_are_refused_by_name(tmp_path, seed, arguments, message):
    with pytest.raises(ValueError, match=message):
        choose(task_dirs(), FreshTasks(tmp_path), seed, arguments)
    assert not (tmp_path / "tasks").exists() or not any((tmp_path / "tasks").iterdir())


def test_seed_picks_workflow_and_tier_when_they_are_not_given(tmp_path):
    from tasks.generator.workflows import implemented

    names = implemented()
    episode = choose(task_dirs(), FreshTasks(tmp_path), len(names) + 2, {})
    assert (episode.workflow, episode.tier) == (names[2], "medium")
    assert episode.split == "train" and episode.reward_mode == "parity" and episode.details
    bundled = choose(task_dirs(), FreshTasks(tmp_path), None, {"task": "af-001-slo-onboarding-easy-s1"})
    assert (bundled.workflow, bundled.tier, bundled.seed) == ("slo-onboarding", "easy", None)


def test_sessions_building_the_same_task_at_once_share_one_folder(tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        built = list(pool.map(lambda _: FreshTasks(tmp_path).task("train", WORKFLOW, TIER, 21),
                              range(4)))
    assert len({t.path for t in built}) == 1
    assert [p.name for p in (tmp_path / "tasks").iterdir() if p.is_dir()] == [built[0].path.name]
    assert task_fingerprint(built[0].path)
