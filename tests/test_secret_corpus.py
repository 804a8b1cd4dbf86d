"""The secret corpus through the whole pipeline: every kind (tests/secret_corpus.py, 57 kinds in
provider-documented formats) placed in file contents, tool arguments, outputs, messages, run
ids, task ids and file names reaches no site file, no single-file export and no publish
stage; the look-alikes (fingerprints, sha256 lines, uuids, PromQL, tool call ids...) reach
the site unchanged.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE_RUNS, fixture_tasks
from secret_corpus import LOOK_ALIKES, SECRETS

from contract.ids import id_problem
from exporter.export import export_site
from exporter.long_text import PART_CHARS
from exporter.publish import publish_site
from exporter.redact import Redactor
from exporter.single_file import export_single_file


def _id_form(text: str) -> str:
    """How a secret can sit in an id or a file name: no whitespace, no separator."""
    return re.sub(r"\s+", "_", text).replace("/", "_").replace("\\", "_")


def _placed(kind: str) -> tuple[str, str] | None:
    """(id text, the secret as it appears in it), or None when no valid id can hold it."""
    text, secret = SECRETS[kind]
    value = f"{kind}-{_id_form(text)}"
    if id_problem(value) is not None or _id_form(text) != text or _id_form(secret) != secret \
            or not Redactor().find(text):
        return None  # only a token recognizable without a key or a syntax around it
    return value, secret


def _runs(root: Path) -> Path:
    runs = root / "runs"
    template = FIXTURE_RUNS / "fixture-oracle-s1"
    for index, kind in enumerate(sorted(SECRETS)):
        text, _ = SECRETS[kind]
        target = runs / f"corpus-{index:02d}"
        shutil.copytree(template, target)
        run = json.loads((target / "run.json").read_text())
        placed = _placed(kind)
        if placed:
            run["run_id"] = f"run-{placed[0]}"
            run["task"]["id"] = f"task-{placed[0]}"
        else:
            run["run_id"] = f"corpus-{index:02d}"
        (target / "run.json").write_text(json.dumps(run))
        trajectory = json.loads((target / "trajectory.json").read_text())
        steps = trajectory["steps"]
        steps[0]["message"] = f"Instruction holding {text}"
        steps[1]["observation"]["results"][0]["content"] = f"output:\n{text}\n"
        steps[2]["message"] = f"I found {text} in the repo"
        write = steps[3]["tool_calls"][0]["arguments"]
        write["content"] += f"\n# {text.replace(chr(10), chr(10) + '# ')}\n"
        if placed:
            write["path"] = f"rules/{placed[0]}.yml"
        steps[4]["tool_calls"][0]["arguments"]["note"] = text
        (target / "trajectory.json").write_text(json.dumps(trajectory))
    return runs


def _leaks(text: str) -> list[str]:
    found = []
    for kind, (_, secret) in SECRETS.items():
        forms = {secret, _id_form(secret)}
        if any(form in text for form in forms if len(form) >= 8):
            found.append(kind)
    return found


@pytest.fixture(scope="module")
def corpus_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("corpus")
    runs = _runs(root)
    summary = export_site([runs], root / "site", task_index=fixture_tasks())
    return root, runs, summary


def test_enough_kinds_and_placements():
    assert len(SECRETS) >= 30 and len(LOOK_ALIKES) >= 20
    assert sum(_placed(kind) is not None for kind in SECRETS) >= 30  # in ids and file names too


def test_no_secret_reaches_any_site_file(corpus_site):
    root, _, summary = corpus_site
    text = "\n".join(p.read_text(errors="replace") for p in (root / "site").rglob("*") if p.is_file())
    assert _leaks(text) == []
    assert summary["renamed_ids"], "ids holding secrets are renamed"
    names = [p.name for p in (root / "site").rglob("*")]
    assert _leaks("\n".join(names)) == []


def test_no_secret_reaches_a_single_file(corpus_site, tmp_path):
    _, runs, _ = corpus_site
    export_single_file([runs], tmp_path / "one.html", redactor=Redactor(), task_index=fixture_tasks())
    assert _leaks((tmp_path / "one.html").read_text()) == []


def test_publish_of_an_unredacted_site_stages_no_secret(corpus_site, tmp_path, monkeypatch):
    """Even a site exported with --no-redact, with secrets cut across long-text parts."""
    from exporter import publish

    _, runs, _ = corpus_site
    long_run = runs / "corpus-00" / "trajectory.json"
    trajectory = json.loads(long_run.read_text())
    secret = SECRETS["github-classic-pat"][0]
    trajectory["steps"][1]["observation"]["results"][0]["content"] = (
        "z" * (PART_CHARS - len(secret) // 2) + secret + "z" * 5000)
    long_run.write_text(json.dumps(trajectory))
    site = tmp_path / "site"
    export_site([runs], site, task_index=fixture_tasks(), redactor=False)
    parts = sorted((site / "data" / "text").rglob("*.json"))
    assert len(parts) >= 2 and not any(secret in p.read_text() for p in parts), "the secret is split"
    staged: dict[str, str] = {}

    def fake_upload(folder, space):
        staged["text"] = "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())
        staged["parts"] = "".join(json.loads(p.read_text()) for p in sorted(
            (folder / "data" / "text").rglob("*.json"), key=lambda p: (p.parent.name, p.name)))

    monkeypatch.setattr(publish, "upload", fake_upload)
    lines: list[str] = []
    try:
        publish_site(site, "org/replay", redactor=Redactor(), out=lines.append)
    except publish.PublishRefused as err:  # a file name that holds a secret cannot be masked
        assert "file name" in str(err)
        return
    leaks = _leaks(staged["text"] + staged["parts"])
    assert leaks == []
    assert secret not in staged["parts"]
    report = [line for line in lines if line.startswith("redacted:")]
    assert report and not any(secret in line for line in lines)


def test_look_alikes_reach_the_site_unchanged(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE_RUNS / "fixture-partial-s1", runs / "fixture-partial-s1")
    path = runs / "fixture-partial-s1" / "trajectory.json"
    trajectory = json.loads(path.read_text())
    steps = trajectory["steps"]
    steps[1]["observation"]["results"][0]["content"] = "\n".join(LOOK_ALIKES)
    steps[2]["message"] = "\n".join(LOOK_ALIKES)
    steps[2]["tool_calls"][0]["arguments"]["look"] = list(LOOK_ALIKES)
    path.write_text(json.dumps(trajectory))
    export_site([runs], tmp_path / "site", task_index=fixture_tasks())
    site_run = json.loads((tmp_path / "site" / "data" / "runs" / "fixture-partial-s1.json").read_bytes())
    assert site_run["steps"][1]["output"] == "\n".join(LOOK_ALIKES)
    assert site_run["steps"][2]["message"] == "\n".join(LOOK_ALIKES)
    assert site_run["steps"][2]["tool"]["arguments"]["look"] == LOOK_ALIKES


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_kind_is_masked_wherever_it_sits(kind):
    text, secret = SECRETS[kind]
    redactor = Redactor()
    wraps = [text, f"x {text} y", f'{{"v": {json.dumps(text)}}}', "pad " * 100 + text]
    if "\n" not in text:  # a list item: (a multi-line YAML form would be re-indented by it)
        wraps.append(f"- {text}\n  next: 1")
    for wrapped in wraps:
        assert secret not in redactor.text(wrapped), wrapped[:80]
    assert secret not in json.dumps(redactor.value({"note": text, "nested": [text]}))


def test_run_ids_in_html_attributes_are_not_taken_for_secrets():
    """A site page names runs in ``data-run-id`` attributes (hyphenated): an id field, like
    run.json's ``run_id``, so the entropy rule leaves it alone; a key in such an attribute is
    still masked by its format."""
    from exporter.redact import Redactor

    run_id = "af-003-slo-onboarding-medium-s1__adversary-inhibit-all__s0__642d9cf104"
    page = f'<tr data-run-id="{run_id}"><td data-run-id="Zx8Qw2mN7pL4vB9cR1tY6uK3"></td></tr>'
    redactor = Redactor()
    assert redactor.text(page) == page
    key = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert key not in Redactor().text(f'<tr data-run-id="{key}">')


def test_each_run_of_a_task_without_a_folder_gets_its_own_task_masked(tmp_path):
    """Renaming memoizes a masked task by id(task); a task read without a folder is a new
    object per run, and a freed one's id is reused by the next: that run got the earlier run's
    task (its id, labels and checks). Found when another test's export ran first in the process."""
    import dataclasses
    import gc

    from exporter.export import Renaming
    from exporter.run_folders import read_run_folder
    from exporter.task_folder import read_task

    source = read_run_folder(FIXTURE_RUNS / "fixture-oracle-s1")
    index, renaming, cache = fixture_tasks(), Renaming(Redactor()), {}
    for number in range(60):  # CPython gives a freed object's address to a later one
        run_json = json.loads(json.dumps(source.run))
        run_json["task"]["id"] = f"elsewhere-task-{number}"  # in no task index: no folder
        run = dataclasses.replace(source, run=run_json)
        task = read_task(run, index, cache)
        run, masked = renaming.redacted(run, task)
        assert masked.id == run.run["task"]["id"] == f"elsewhere-task-{number}"
        del task
        gc.collect()
