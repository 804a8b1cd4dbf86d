"""Hostile input across grade, record, the importers, export, publish and the viewer.

Each case builds an input from links, FIFOs, devices, hard links, forged ids and paths,
damaged files and planted secrets, then runs the real CLI in a subprocess with a timeout.
Every case must hold five things: no hang (it returns before the timeout), no traceback,
the exit code the case expects (0 ok, 1 refused, 2 bad input), no byte of the canary file
planted outside every tree in any output, and nothing written outside the output folders.
Each case is its own test (the suite's workers spread them). The viewer part opens every
valid hostile run in Chromium and checks that no payload ran.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from contract.paths import TASKS_DIR, task_dirs

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
FIXTURE_RUNS = FIXTURES / "site" / "runs"
FIXTURE_TASKS = FIXTURES / "site" / "tasks"
HARBOR_JOB = FIXTURES / "harbor-job" / "2026-11-29__09-00-00"
EPISODES = ROOT / "examples" / "aria-episodes" / "episodes"
TASK = task_dirs(TASKS_DIR)[0]
CANARY = "OUTSIDE-CANARY-5b1e9d"
SECRET = "ghp_" + "Zq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gEXy12"
TIMEOUT_S = 120


@dataclass
class Case:
    """One hostile input: ``build(base) -> argv`` (after ``alertforge``), the exit codes it
    may give, and more checks on the result (``check(base, proc)``)."""

    name: str
    build: Callable[[Path], list[str]]
    exits: tuple[int, ...]
    check: Callable[[Path, subprocess.CompletedProcess], None] | None = None
    browse: bool = False
    """Export the case's runs for the viewer test (valid runs carrying payloads)."""


CASES: list[Case] = []


def case(name: str, exits: tuple[int, ...] | int, browse: bool = False):
    """Register the decorated ``build(base) -> argv`` as a case (``CASES[-1].check`` may be
    set right after it)."""
    def register(build):
        CASES.append(Case(name, build, exits if isinstance(exits, tuple) else (exits,), None, browse))
        return build
    return register


# ------------------------------------------------------------------------------- building blocks


def outside(base: Path) -> Path:
    """A folder outside every tree holding the canary (a private key and a rule file)."""
    folder = base / "outside"
    if not folder.exists():
        folder.mkdir()
        (folder / "id_rsa").write_text(f"-----BEGIN RSA PRIVATE KEY-----\n{CANARY}\n")
        (folder / "canary.yml").write_text(
            f"groups:\n- name: {CANARY}\n  rules:\n  - alert: {CANARY}\n    expr: vector(1)\n")
        (folder / "canary.tmpl").write_text(f'{{{{ define "{CANARY}" }}}}{CANARY}{{{{ end }}}}\n')
        (folder / "traj.json").write_text(json.dumps(
            {"schema_version": "ATIF-v1.6", "session_id": "x", "agent": {"name": "a", "version": "1"},
             "steps": [{"step_id": 1, "source": "user", "message": CANARY}]}))
        (folder / "monitoring").mkdir()
        (folder / "monitoring" / "leak.yml").write_text(CANARY + "\n")
    return folder


def workspace(base: Path) -> Path:
    ws = base / "ws"
    shutil.copytree(TASK / "environment" / "monitoring", ws)
    return ws


def grade_argv(ws: Path) -> list[str]:
    return ["grade", str(TASK), "--workspace", str(ws), "--json"]


def fixture_runs(base: Path) -> Path:
    runs = base / "runs"
    shutil.copytree(FIXTURE_RUNS, runs)
    return runs


def export_argv(runs: Path, base: Path, *extra: str) -> list[str]:
    return ["export", str(runs), "--tasks", str(FIXTURE_TASKS), "--out", str(base / "site"), *extra]


def edit_json(path: Path, change: Callable[[dict], object]) -> None:
    data = json.loads(path.read_text())
    result = change(data)
    path.write_text(json.dumps(data if result is None else result))


def one_run(base: Path, run_id: str = "fixture-oracle-s1") -> Path:
    runs = base / "runs"
    runs.mkdir()
    shutil.copytree(FIXTURE_RUNS / run_id, runs / run_id)
    return runs


def tasks_root(base: Path) -> Path:
    root = base / "tasks"
    shutil.copytree(FIXTURE_TASKS, root)
    return root


def job(base: Path) -> Path:
    target = base / "job"
    shutil.copytree(HARBOR_JOB, target)
    return target


def trials(job_dir: Path) -> list[Path]:
    return sorted(p for p in job_dir.iterdir() if p.is_dir())


def symlink(target: Path | str, link: Path) -> None:
    if link.exists() or link.is_symlink():
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        else:
            link.unlink()
    os.symlink(target, link)


def fifo(path: Path) -> None:
    if path.exists():
        path.unlink()
    os.mkfifo(path)


def unix_socket(path: Path) -> None:
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(path))
    sock.close()


# ----------------------------------------------------------------------------------------- grade


@case("grade: rule file linked outside", 0)
def _(base):
    ws = workspace(base)
    symlink(outside(base) / "canary.yml", ws / "rules" / "x.yml")
    return grade_argv(ws)


@case("grade: rules folder linked outside", 0)
def _(base):
    ws = workspace(base)
    symlink(outside(base), ws / "rules")
    return grade_argv(ws)


@case("grade: rules subfolder linked outside", 0)
def _(base):
    ws = workspace(base)
    symlink(outside(base), ws / "rules" / "sub")
    return grade_argv(ws)


@case("grade: alertmanager folder linked outside", 0)
def _(base):
    ws = workspace(base)
    folder = outside(base) / "am"
    folder.mkdir()
    (folder / "alertmanager.yml").write_text(f"route: {{receiver: {CANARY}}}\n")
    symlink(folder, ws / "alertmanager")
    return grade_argv(ws)


@case("grade: alertmanager.yml linked to a private key", 0)
def _(base):
    ws = workspace(base)
    symlink(outside(base) / "id_rsa", ws / "alertmanager" / "alertmanager.yml")
    return grade_argv(ws)


@case("grade: alertmanager.yml linked to /dev/zero", 0)
def _(base):
    ws = workspace(base)
    symlink("/dev/zero", ws / "alertmanager" / "alertmanager.yml")
    return grade_argv(ws)


@case("grade: rule file linked to /dev/urandom", 0)
def _(base):
    ws = workspace(base)
    symlink("/dev/urandom", ws / "rules" / "random.yml")
    return grade_argv(ws)


@case("grade: FIFO as rule file", 0)
def _(base):
    ws = workspace(base)
    fifo(ws / "rules" / "pipe.yml")
    return grade_argv(ws)


@case("grade: FIFO as alertmanager.yml", 0)
def _(base):
    ws = workspace(base)
    fifo(ws / "alertmanager" / "alertmanager.yml")
    return grade_argv(ws)


@case("grade: socket as rule file", 0)
def _(base):
    ws = workspace(base)
    unix_socket(ws / "rules" / "sock.yml")
    return grade_argv(ws)


@case("grade: hard link to a file outside", 0)
def _(base):
    ws = workspace(base)
    os.link(outside(base) / "canary.yml", ws / "rules" / "hard.yml")
    return grade_argv(ws)


@case("grade: templates absolute", 0)
def _(base):
    ws = workspace(base)
    am = ws / "alertmanager" / "alertmanager.yml"
    am.write_text(am.read_text() + f"\ntemplates: ['{outside(base)}/*.tmpl']\n")
    return grade_argv(ws)


@case("grade: templates leaving the repo", 0)
def _(base):
    ws = workspace(base)
    am = ws / "alertmanager" / "alertmanager.yml"
    am.write_text(am.read_text() + "\ntemplates: ['../../outside/*.tmpl']\n")
    outside(base)
    return grade_argv(ws)


@case("grade: template inside the repo linked outside", 0)
def _(base):
    ws = workspace(base)
    (ws / "alertmanager" / "t").mkdir()
    symlink(outside(base) / "canary.tmpl", ws / "alertmanager" / "t" / "x.tmpl")
    am = ws / "alertmanager" / "alertmanager.yml"
    am.write_text(am.read_text() + "\ntemplates: ['t/*.tmpl']\n")
    return grade_argv(ws)


@case("grade: template folder linked outside", 0)
def _(base):
    ws = workspace(base)
    symlink(outside(base), ws / "alertmanager" / "t")
    am = ws / "alertmanager" / "alertmanager.yml"
    am.write_text(am.read_text() + "\ntemplates: ['t/*.tmpl']\n")
    return grade_argv(ws)


@case("grade: rules nested 80 folders deep", 0)
def _(base):
    ws = workspace(base)
    deep = ws / "rules"
    for index in range(80):
        deep = deep / f"d{index}"
    deep.mkdir(parents=True)
    (deep / "deep.yml").write_text("groups: []\n")
    return grade_argv(ws)


@case("grade: 3,000 stray files", 0)
def _(base):
    ws = workspace(base)
    for index in range(3000):
        (ws / "rules" / f"note-{index}.txt").write_text("x")
    return grade_argv(ws)


@case("grade: rule file over the size cap", 0)
def _(base):
    ws = workspace(base)
    with open(ws / "rules" / "big.yml", "wb") as handle:
        handle.truncate(3 * 1024 * 1024)
    return grade_argv(ws)


@case("grade: NUL bytes in a rule file", 0)
def _(base):
    ws = workspace(base)
    (ws / "rules" / "nul.yml").write_bytes(b"groups:\x00\n- name: x\n")
    return grade_argv(ws)


@case("grade: newline in a rule file name", 0)
def _(base):
    ws = workspace(base)
    (ws / "rules" / "a\nb.yml").write_text("groups: []\n")
    return grade_argv(ws)


@case("grade: alias bomb in alertmanager.yml", 0)
def _(base):
    ws = workspace(base)
    bomb = "a: &a [x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n" for i in range(9))
    (ws / "alertmanager" / "alertmanager.yml").write_text(bomb)
    return grade_argv(ws)


@case("grade: python tag in alertmanager.yml", 0)
def _(base):
    ws = workspace(base)
    (ws / "alertmanager" / "alertmanager.yml").write_text("route: !!python/object/apply:os.system ['id']\n")
    return grade_argv(ws)


@case("grade: workspace is a file", 2)
def _(base):
    (base / "ws").write_text("x")
    return grade_argv(base / "ws")


@case("grade: workspace missing", 2)
def _(base):
    return grade_argv(base / "nowhere")


@case("grade: rule file linked to a folder outside", 0)
def _(base):
    ws = workspace(base)
    symlink(outside(base), ws / "rules" / "dir.yml")
    return grade_argv(ws)


@case("grade: workspace with a link loop", 0)
def _(base):
    ws = workspace(base)
    symlink(ws / "rules" / "loop", ws / "rules" / "loop")
    return grade_argv(ws)


# ---------------------------------------------------------------------------------------- record


def task_copy(base: Path, change: Callable[[dict], None]) -> Path:
    root = base / "tasks"
    shutil.copytree(TASK, root / TASK.name)
    edit_json(root / TASK.name / "tests" / "spec.json", change)
    return root


def record_argv(base: Path, tasks: Path | None = None, policy: str = "nop") -> list[str]:
    argv = ["record", "--task", TASK.name, "--policy", policy, "--out", str(base / "out")]
    return argv + (["--tasks", str(tasks)] if tasks else [])


def recorded(base: Path, policy: str = "nop") -> Path:
    """A finished nop run in base/out, recorded in this process's pool worker."""
    from recorder.record import record_run

    return record_run(TASK, policy, out=base / "out")


@case("record: task id leaving --out", 2)
def _(base):
    return record_argv(base, task_copy(base, lambda spec: spec.update(task_id="../../escape")))


@case("record: NUL in the task id", 2)
def _(base):
    return record_argv(base, task_copy(base, lambda spec: spec.update(task_id="bad\u0000id")))


@case("record: newline in the task id", 2)
def _(base):
    return record_argv(base, task_copy(base, lambda spec: spec.update(task_id="bad\nid")))


@case("record: spec.json is a list", 2)
def _(base):
    return record_argv(base, task_copy(base, lambda spec: [1, 2]))


def damaged_journal(base: Path, lines: Callable[[list[bytes]], list[bytes]]) -> list[str]:
    run = recorded(base)
    journal = run / "journal.jsonl"
    journal.write_bytes(b"".join(lines(journal.read_bytes().splitlines(keepends=True))))
    edit_json(run / "run.json", lambda r: r.update(status="running"))
    return record_argv(base)


@case("record: {} line in a journal", 2)
def _(base):
    return damaged_journal(base, lambda lines: lines[:1] + [b"{}\n"] + lines[1:])


@case("record: [1, 2] line in a journal", 2)
def _(base):
    return damaged_journal(base, lambda lines: lines[:1] + [b"[1, 2]\n"] + lines[1:])


@case("record: torn line in the middle of a journal", 2)
def _(base):
    return damaged_journal(base, lambda lines: lines[:1] + [lines[1][:20] + b"\n"] + lines[2:])


@case("record: steps out of order in a journal", 2)
def _(base):
    return damaged_journal(base, lambda lines: [lines[0], lines[2], lines[1]] + lines[3:])


@case("record: torn last line of a journal resumes", 0)
def _(base):
    return damaged_journal(base, lambda lines: lines[:-1] + [lines[-1][:15]])


@case("record: run.json is a list", 2)
def _(base):
    run = recorded(base)
    (run / "run.json").write_text("[1, 2]")
    return record_argv(base)


@case("record: run.json is a FIFO", 2)
def _(base):
    run = recorded(base)
    fifo(run / "run.json")
    return record_argv(base)


@case("record: journal linked outside", 2)
def _(base):
    run = recorded(base)
    edit_json(run / "run.json", lambda r: r.update(status="running"))
    symlink(outside(base) / "id_rsa", run / "journal.jsonl")
    return record_argv(base)


@case("record: --out is a file", 2)
def _(base):
    (base / "out").write_text("x")
    return record_argv(base)


@case("record: adversary name with a path", 2)
def _(base):
    return record_argv(base, policy="adversary:../../x")


# ---------------------------------------------------------------------------------------- export


def run_json(runs: Path, run_id: str = "fixture-oracle-s1") -> Path:
    return runs / run_id / "run.json"


@case("export: run folder is a link", 2)
def _(base):
    runs = fixture_runs(base)
    shutil.move(runs / "fixture-oracle-s1", base / "moved")
    symlink(base / "moved", runs / "fixture-oracle-s1")
    return export_argv(runs, base)


@case("export: run.json linked outside", 2)
def _(base):
    runs = fixture_runs(base)
    symlink(outside(base) / "id_rsa", run_json(runs))
    return export_argv(runs, base)


@case("export: trajectory.json is a FIFO", 2)
def _(base):
    runs = fixture_runs(base)
    fifo(runs / "fixture-oracle-s1" / "trajectory.json")
    return export_argv(runs, base)


@case("export: run.json linked to /dev/zero", 2)
def _(base):
    runs = fixture_runs(base)
    symlink("/dev/zero", run_json(runs))
    return export_argv(runs, base)


@case("export: run.json is a list", 2)
def _(base):
    runs = fixture_runs(base)
    run_json(runs).write_text("[1, 2]")
    return export_argv(runs, base)


@case("export: run.json is {}", 2)
def _(base):
    runs = fixture_runs(base)
    run_json(runs).write_text("{}")
    return export_argv(runs, base)


for _label, _value in (("a path", "../escape"), ("NUL", "x\u0000y"), ("a newline", "x\ny"),
                       ("500 characters", "x" * 500), ("a bidi override", "run\u202eevil"),
                       ("a leading dot", ".hidden")):
    def _build(base, value=_value):
        runs = fixture_runs(base)
        edit_json(run_json(runs), lambda r: r.update(run_id=value))
        return export_argv(runs, base)

    CASES.append(Case(f"export: run id with {_label}", _build, (2,)))

    def _build_task(base, value=_value):
        runs = fixture_runs(base)
        edit_json(run_json(runs), lambda r: r["task"].update(id=value))
        return export_argv(runs, base)

    CASES.append(Case(f"export: task id with {_label}", _build_task, (2,)))


def crafted_task(base: Path, name: str = "fixture-checkout") -> Path:
    """A task folder outside the task roots whose pristine repo is the canary."""
    folder = base / "crafted" / name
    shutil.copytree(FIXTURE_TASKS / "fixture-checkout", folder)
    shutil.rmtree(folder / "environment" / "monitoring")
    shutil.copytree(outside(base) / "monitoring", folder / "environment" / "monitoring")
    (folder / "instruction.md").write_text(f"# {CANARY}\n")
    return folder


@case("export: task.dir relative to a crafted folder", 0, browse=True)
def _(base):
    runs = fixture_runs(base)
    crafted_task(base)
    edit_json(run_json(runs), lambda r: r["task"].update(dir="../../crafted/fixture-checkout"))
    return export_argv(runs, base)


@case("export: task.dir absolute", 0)
def _(base):
    runs = fixture_runs(base)
    folder = crafted_task(base)
    edit_json(run_json(runs), lambda r: r["task"].update(dir=str(folder)))
    return export_argv(runs, base)


@case("export: task.dir to /etc", 0)
def _(base):
    runs = fixture_runs(base)
    edit_json(run_json(runs), lambda r: r["task"].update(dir="/etc"))
    return export_argv(runs, base)


@case("export: task root with a linked monitoring folder", 0)
def _(base):
    runs = fixture_runs(base)
    root = tasks_root(base)
    symlink(outside(base) / "monitoring", root / "fixture-checkout" / "environment" / "monitoring")
    return ["export", str(runs), "--tasks", str(root), "--out", str(base / "site")]


@case("export: task root with a linked instruction.md", 0)
def _(base):
    runs = fixture_runs(base)
    root = tasks_root(base)
    symlink(outside(base) / "id_rsa", root / "fixture-checkout" / "instruction.md")
    return ["export", str(runs), "--tasks", str(root), "--out", str(base / "site")]


@case("export: task root with a linked pristine file", 0)
def _(base):
    runs = fixture_runs(base)
    root = tasks_root(base)
    symlink(outside(base) / "id_rsa", root / "fixture-checkout" / "environment" / "monitoring" / "key.yml")
    return ["export", str(runs), "--tasks", str(root), "--out", str(base / "site")]


@case("export: task.toml tier is a list", 2)
def _(base):
    runs = fixture_runs(base)
    root = tasks_root(base)
    toml = root / "fixture-checkout" / "task.toml"
    toml.write_text(toml.read_text().replace("tier = 1", "tier = [1, 2]"))
    return ["export", str(runs), "--tasks", str(root), "--out", str(base / "site")]


@case("export: run.json tier is a list", 2)
def _(base):
    runs = fixture_runs(base)
    edit_json(run_json(runs, "fixture-xss"), lambda r: r["task"].update(tier=[1, 2]))
    return export_argv(runs, base)


@case("export: a task root whose checks.json is a list matches no run", 0)
def _(base):
    runs = fixture_runs(base)
    root = tasks_root(base)
    (root / "fixture-checkout" / "tests" / "checks.json").write_text("[1]")
    edit_json(run_json(runs), lambda r: r["task"].pop("fingerprint", None))
    return ["export", str(runs), "--tasks", str(root), "--out", str(base / "site")]


@case("export: checks string of the wrong length", 2)
def _(base):
    runs = fixture_runs(base)
    path = runs / "fixture-oracle-s1" / "trajectory.json"
    edit_json(path, lambda t: t["steps"][3]["extra"]["grade"].update(checks="10"))
    return export_argv(runs, base)


@case("export: trajectory that is not ATIF", 2)
def _(base):
    runs = fixture_runs(base)
    (runs / "fixture-oracle-s1" / "trajectory.json").write_text('{"steps": "no"}')
    return export_argv(runs, base)


@case("export: write_file to a path outside the repo", 0, browse=True)
def _(base):
    runs = fixture_runs(base)
    path = runs / "fixture-oracle-s1" / "trajectory.json"
    edit_json(path, lambda t: t["steps"][3]["tool_calls"][0]["arguments"].update(path=str(outside(base) / "id_rsa")))
    return export_argv(runs, base)


@case("export: a secret in the run id is renamed", 0, browse=True)
def _(base):
    runs = fixture_runs(base)
    edit_json(run_json(runs), lambda r: r.update(run_id=f"leak-{SECRET}"))
    return export_argv(runs, base)


@case("export: a secret in the task id is renamed", 0)
def _(base):
    runs = fixture_runs(base)
    edit_json(run_json(runs, "fixture-xss"), lambda r: r["task"].update(id=f"task-{SECRET}"))
    return export_argv(runs, base)


@case("export: a secret split across two long-text parts", 0)
def _(base):
    runs = fixture_runs(base)
    path = runs / "fixture-oracle-s1" / "trajectory.json"
    cut = 1_000_000 - len(SECRET) // 2
    text = "a" * cut + SECRET + "b" * 1_000_100
    edit_json(path, lambda t: t["steps"][1]["observation"]["results"][0].update(content=text))
    return export_argv(runs, base)


@case("export: --out is the runs folder", 2)
def _(base):
    runs = fixture_runs(base)
    return ["export", str(runs), "--tasks", str(FIXTURE_TASKS), "--out", str(runs)]


def dataset_repo(base: Path) -> Path:
    site = base / "site"
    (site / "data" / "tasks").mkdir(parents=True)
    (site / "static").mkdir()
    (site / "README.md").write_text("---\nlicense: mit\n---\n")
    (site / "data" / "tasks" / "train.csv").write_text("mine\n")
    (site / "static" / "logo.png").write_bytes(b"\x89PNG mine")
    return site


def _dataset_intact(base: Path, proc) -> None:
    site = base / "site"
    assert (site / "data" / "tasks" / "train.csv").read_text() == "mine\n"
    assert (site / "static" / "logo.png").read_bytes() == b"\x89PNG mine"
    assert "train.csv" in proc.stderr


@case("export: into a folder shaped like a dataset repo", 2)
def _(base):
    runs = fixture_runs(base)
    dataset_repo(base)
    return export_argv(runs, base)


CASES[-1].check = _dataset_intact


@case("export: --out is a file", 2)
def _(base):
    runs = fixture_runs(base)
    (base / "site").write_text("x")
    return export_argv(runs, base)


def _previous_site_intact(base: Path, proc) -> None:
    from exporter.site_swap import verify_site

    assert (base / "site" / "site-manifest.json").is_file()
    assert verify_site(base / "site") == []
    assert (base / "site" / "data" / "runs" / "fixture-oracle-s1.json").is_file()


@case("export: a bad run leaves the previous site intact", 2)
def _(base):
    runs = fixture_runs(base)
    subprocess.run([sys.executable, "-m", "alertforge.cli", *export_argv(runs, base)], check=True,
                   capture_output=True)
    edit_json(run_json(runs, "fixture-xss"), lambda r: r.update(run_id="../x"))
    return export_argv(runs, base)


CASES[-1].check = _previous_site_intact


@case("export: run.json over its size cap", 2)
def _(base):
    runs = fixture_runs(base)
    with open(run_json(runs), "ab") as handle:
        handle.truncate(17 * 1024 * 1024)
    return export_argv(runs, base)


@case("export: a run folder with a journal only", 2)
def _(base):
    runs = base / "runs"
    (runs / "r").mkdir(parents=True)
    (runs / "r" / "journal.jsonl").write_text("{}\n")
    return export_argv(runs, base)


@case("export: an image part naming a file outside", 0, browse=True)
def _(base):
    runs = fixture_runs(base)
    path = runs / "fixture-oracle-s1" / "trajectory.json"
    edit_json(path, lambda t: t["steps"][0].update(message=[
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"media_type": "image/png", "path": str(outside(base) / "id_rsa")}}]))
    return export_argv(runs, base)


@case("export: a stray link inside a run folder is not read", 0)
def _(base):
    runs = fixture_runs(base)
    symlink(outside(base) / "id_rsa", runs / "fixture-oracle-s1" / "notes.txt")
    return export_argv(runs, base)


@case("export: two run folders with one run id", 2)
def _(base):
    runs = fixture_runs(base)
    shutil.copytree(runs / "fixture-oracle-s1", runs / "copy")
    return export_argv(runs, base)


@case("export: single file with a linked run folder", 2)
def _(base):
    runs = fixture_runs(base)
    shutil.move(runs / "fixture-xss", base / "moved")
    symlink(base / "moved", runs / "fixture-xss")
    return ["export", str(runs), "--tasks", str(FIXTURE_TASKS), "--single-file", str(base / "one.html")]


@case("export: --redact-patterns is a FIFO", 2)
def _(base):
    runs = fixture_runs(base)
    fifo(base / "patterns.txt")
    return export_argv(runs, base, "--redact-patterns", str(base / "patterns.txt"))


@case("export: a path holding NUL in a tool call", 0, browse=True)
def _(base):
    runs = fixture_runs(base)
    path = runs / "fixture-oracle-s1" / "trajectory.json"
    edit_json(path, lambda t: t["steps"][3]["tool_calls"][0]["arguments"].update(path="rules/a\u0000.yml"))
    return export_argv(runs, base)


@case("export: provider secrets in every field", 0, browse=True)
def _(base):
    sys.path.insert(0, str(Path(__file__).parent))
    from secret_corpus import SECRETS

    runs = fixture_runs(base)
    path = runs / "fixture-oracle-s1" / "trajectory.json"
    blob = "\n".join(text for text, _ in SECRETS.values())

    def plant(t):
        t["steps"][1]["observation"]["results"][0]["content"] = blob
        t["steps"][2]["message"] = blob
        t["steps"][3]["tool_calls"][0]["arguments"]["content"] += "\n# " + blob.replace("\n", "\n# ")
    edit_json(path, plant)
    return export_argv(runs, base)


def _no_corpus_secret(base: Path, proc) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from secret_corpus import SECRETS

    text = site_text(base)
    assert [kind for kind, (_, secret) in SECRETS.items() if secret in text] == []


CASES[-1].check = _no_corpus_secret


# --------------------------------------------------------------------------------------- publish


def built_site(base: Path, *extra: str) -> Path:
    runs = fixture_runs(base)
    subprocess.run([sys.executable, "-m", "alertforge.cli", *export_argv(runs, base, *extra)],
                   check=True, capture_output=True)
    return base / "site"


def publish_argv(site: Path) -> list[str]:
    return ["publish", "--space", "org/name", "--site", str(site), "--dry-run"]


@case("publish: a link to a file outside the site", 2)
def _(base):
    site = built_site(base)
    symlink(outside(base) / "id_rsa", site / "data" / "key.json")
    return publish_argv(site)


@case("publish: a linked folder inside the site", 2)
def _(base):
    site = built_site(base)
    symlink(outside(base), site / "gallery" / "more")
    return publish_argv(site)


@case("publish: a FIFO in the site", 2)
def _(base):
    site = built_site(base)
    fifo(site / "data" / "pipe.json")
    return publish_argv(site)


@case("publish: a secret in a file name", 1)
def _(base):
    site = built_site(base)
    (site / "data" / f"{SECRET}.json").write_text("{}")
    return publish_argv(site)


@case("publish: a secret in the viewer's code", 1)
def _(base):
    site = built_site(base)
    with open(site / "static" / "js" / "pages" / "run.js", "a") as handle:
        handle.write(f"\n// {SECRET}\n")
    return publish_argv(site)


@case("publish: a file over 10 MB", 1)
def _(base):
    site = built_site(base)
    with open(site / "data" / "big.json", "wb") as handle:
        handle.truncate(11 * 1024 * 1024)
    return publish_argv(site)


@case("publish: no site", 2)
def _(base):
    (base / "empty").mkdir()
    return publish_argv(base / "empty")


@case("publish: a bad Space id", 2)
def _(base):
    site = built_site(base)
    return ["publish", "--space", "../../x", "--site", str(site), "--dry-run"]


@case("publish: an unredacted site", 0)
def _(base):
    site = built_site(base, "--no-redact")
    path = site / "data" / "runs" / "fixture-xss.json"
    edit_json(path, lambda r: r["steps"][1].update(message=f"token {SECRET}"))
    return publish_argv(site)


# ----------------------------------------------------------------------------------- import-harbor


def harbor_argv(job_dir: Path, base: Path) -> list[str]:
    return ["import-harbor", str(job_dir), "--out", str(base / "out")]


@case("import-harbor: a trial folder is a link", 0)
def _(base):
    job_dir = job(base)
    first = trials(job_dir)[0]
    shutil.move(first, base / "moved")
    symlink(base / "moved", first)
    return harbor_argv(job_dir, base)


@case("import-harbor: result.json linked outside", 0)
def _(base):
    job_dir = job(base)
    symlink(outside(base) / "id_rsa", trials(job_dir)[0] / "result.json")
    return harbor_argv(job_dir, base)


@case("import-harbor: trajectory is a FIFO", 0)
def _(base):
    job_dir = job(base)
    fifo(trials(job_dir)[0] / "agent" / "trajectory.json")
    return harbor_argv(job_dir, base)


@case("import-harbor: trajectory linked to /dev/zero", 0)
def _(base):
    job_dir = job(base)
    symlink("/dev/zero", trials(job_dir)[0] / "agent" / "trajectory.json")
    return harbor_argv(job_dir, base)


def continued(base: Path, ref: Callable[[Path], str]) -> list[str]:
    job_dir = job(base)
    path = trials(job_dir)[0] / "agent" / "trajectory.json"
    outside(base)
    edit_json(path, lambda t: t.update(continued_trajectory_ref=ref(path)))
    return harbor_argv(job_dir, base)


@case("import-harbor: continued_trajectory_ref leaving the job", 0)
def _(base):
    return continued(base, lambda path: "../../../../outside/traj.json")


@case("import-harbor: continued_trajectory_ref absolute", 0)
def _(base):
    return continued(base, lambda path: str(base / "outside" / "traj.json"))


@case("import-harbor: continued_trajectory_ref to a link in the job", 0)
def _(base):
    def ref(path):
        symlink(base / "outside" / "traj.json", path.parent / "more.json")
        return "more.json"
    return continued(base, ref)


@case("import-harbor: reward.txt linked to /dev/zero", 0)
def _(base):
    job_dir = job(base)
    for trial in trials(job_dir):
        if (trial / "verifier" / "reward.txt").exists():
            symlink("/dev/zero", trial / "verifier" / "reward.txt")
    return harbor_argv(job_dir, base)


@case("import-harbor: reward.txt is a FIFO", 0)
def _(base):
    job_dir = job(base)
    for trial in trials(job_dir):
        if (trial / "verifier" / "reward.txt").exists():
            fifo(trial / "verifier" / "reward.txt")
    return harbor_argv(job_dir, base)


@case("import-harbor: result.json is a list", 0)
def _(base):
    job_dir = job(base)
    (trials(job_dir)[0] / "result.json").write_text("[1, 2]")
    return harbor_argv(job_dir, base)


@case("import-harbor: trial name leaving --out", 0)
def _(base):
    job_dir = job(base)
    edit_json(trials(job_dir)[0] / "result.json", lambda r: r.update(trial_name="../../../escaped"))
    return harbor_argv(job_dir, base)


@case("import-harbor: a trajectory over its cap", 0)
def _(base):
    job_dir = job(base)
    with open(trials(job_dir)[0] / "agent" / "trajectory.json", "ab") as handle:
        handle.truncate(300 * 1024 * 1024)
    return harbor_argv(job_dir, base)


@case("import-harbor: job folder missing", 2)
def _(base):
    return harbor_argv(base / "nowhere", base)


@case("import-harbor: --tasks missing", 2)
def _(base):
    return [*harbor_argv(job(base), base), "--tasks", str(base / "nowhere")]


# ---------------------------------------------------------------------------------- import-episodes


def episodes_argv(path: Path, base: Path) -> list[str]:
    return ["import-episodes", str(path), "--out", str(base / "out")]


@case("import-episodes: transcript is a FIFO", 2)
def _(base):
    fifo(base / "t.json")
    return episodes_argv(base / "t.json", base)


@case("import-episodes: transcript is /dev/zero", 2)
def _(base):
    return episodes_argv(Path("/dev/zero"), base)


@case("import-episodes: transcript linked outside", 2)
def _(base):
    symlink(outside(base) / "id_rsa", base / "t.json")
    return episodes_argv(base / "t.json", base)


@case("import-episodes: transcript is a list", 2)
def _(base):
    (base / "t.json").write_text("[1, 2]")
    return episodes_argv(base / "t.json", base)


@case("import-episodes: transcript over its cap", 2)
def _(base):
    with open(base / "t.json", "wb") as handle:
        handle.truncate(100 * 1024 * 1024)
    return episodes_argv(base / "t.json", base)


@case("import-episodes: task id with a path", (0, 2))
def _(base):
    data = json.loads((EPISODES / "easy-expert.json").read_text())
    text = json.dumps(data).replace('"easy"', '"../../escape"')
    (base / "t.json").write_text(text)
    return episodes_argv(base / "t.json", base)


# ------------------------------------------------------------------------------------- the runner


@dataclass
class Outcome:
    case: Case
    base: Path
    proc: subprocess.CompletedProcess | None
    hung: bool = False
    before: set[str] = field(default_factory=set)


def _snapshot(base: Path) -> set[str]:
    return {str(p.relative_to(base)) for p in base.rglob("*") if not p.is_symlink()}


def _run(case_: Case, base: Path) -> Outcome:
    base.mkdir(parents=True)
    argv = case_.build(base)
    before = _snapshot(base)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    try:
        proc = subprocess.run([sys.executable, "-m", "alertforge.cli", *argv], capture_output=True,
                              text=True, timeout=TIMEOUT_S, env=env, cwd=base, check=False)
    except subprocess.TimeoutExpired:
        return Outcome(case_, base, None, hung=True, before=before)
    return Outcome(case_, base, proc, before=before)


def site_text(base: Path) -> str:
    chunks = []
    for folder in ("site", "out", "one.html"):
        path = base / folder
        files = [path] if path.is_file() else [p for p in path.rglob("*") if p.is_file() and not p.is_symlink()]
        for file in files:
            try:
                chunks.append(file.read_bytes().decode("utf-8", errors="replace"))
            except OSError:
                continue
    return "\n".join(chunks)


CASE_BY_NAME = {c.name: c for c in CASES}


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_hostile_input(tmp_path, name):
    outcome = _run(CASE_BY_NAME[name], tmp_path / "case")
    assert not outcome.hung, f"{name}: no answer within {TIMEOUT_S} s"
    proc = outcome.proc
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode in outcome.case.exits, (proc.returncode, proc.stdout[-800:], proc.stderr[-800:])
    assert CANARY not in proc.stdout and CANARY not in site_text(outcome.base)
    if not name.startswith("publish"):
        assert SECRET not in site_text(outcome.base), "a planted secret reached the site"
    escaped = [p.name for p in outcome.base.parent.iterdir() if p.name != "case"]
    assert escaped == [], f"wrote next to the case folder: {escaped}"
    after = _snapshot(outcome.base)
    written = {p for p in after - outcome.before
               if not p.startswith(("site", "out", "one.html", ".site.", "runs/"))}
    assert written == set(), f"wrote outside the output folders: {sorted(written)[:5]}"
    if proc.returncode == 2:
        assert proc.stderr.startswith("alertforge: "), proc.stderr[:300]
    if outcome.case.check:
        outcome.case.check(outcome.base, proc)


def test_the_suite_has_enough_cases():
    assert len(CASES) >= 80
    assert {c.name.split(":")[0] for c in CASES} >= {"grade", "record", "export", "publish",
                                                     "import-harbor", "import-episodes"}


@pytest.mark.browser
def test_no_payload_runs_in_the_viewer_on_hostile_sites(tmp_path, browser):
    from exporter.serve import serve_in_background

    opened = 0
    browsed = [c for c in CASES if c.browse]
    with ThreadPoolExecutor(max_workers=2) as pool:
        outcomes = list(pool.map(lambda ic: _run(ic[1], tmp_path / f"case-{ic[0]}"),
                                 enumerate(browsed)))
    for outcome in outcomes:
        assert outcome.proc is not None and outcome.proc.returncode == 0, outcome.case.name
        site = outcome.base / "site"
        server, url = serve_in_background(site, port=0, host="127.0.0.1")
        try:
            index = json.loads((site / "data" / "index.json").read_text())
            context = browser.new_context()
            page = context.new_page()
            for row in index["runs"]:
                for step in (0, 1, 3):
                    page.goto(f"{url}run.html?run={row['run_id']}&step={step}")
                    page.wait_for_selector("body[data-ready='1']", timeout=10000)
                    assert page.evaluate("window.__pwned") is None
                    opened += 1
            context.close()
        finally:
            server.shutdown()
            server.server_close()
    assert opened >= 20
