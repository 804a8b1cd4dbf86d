"""The viewer benchmark's generated runs: one 1,000-step run with 200 checks in a 1,000-run index.

:func:`generate` writes the generated task's runs (one big run of ``steps`` steps and ``checks``
checks, the others of 6 steps). Many-run sites copied from real runs are bench/big_site.py's.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

TASK_ID = "bench-task"
BIG_RUN = "bench-big"
REQUIREMENTS = 20
FAMILIES = ("Fire", "Timing", "Silent", "Dup", "Label", "Route", "Preservation", "Syntax")


def requirements() -> list[dict]:
    return [{"id": f"R{r:02d}", "kind": ("alert", "route", "recording")[r % 3], "weight": 3 if r % 3 == 0 else 2,
             "title": f"requirement {r}: service-{r} pages on its SLO"} for r in range(REQUIREMENTS)]


def checks(count: int) -> list[dict]:
    return [{"id": f"R{c % REQUIREMENTS:02d}-{FAMILIES[c % len(FAMILIES)].lower()}-{c:03d}",
             "req": f"R{c % REQUIREMENTS:02d}", "family": FAMILIES[c % len(FAMILIES)],
             "label": f"check {c}: service-{c % REQUIREMENTS} behaves during scenario {c % 7}",
             "note": "generated for the viewer benchmark"} for c in range(count)]


def rule_file(step: int, rng: random.Random) -> str:
    lines = ["groups:", f"  - name: bench-{step % 20}", "    rules:"]
    for rule in range(12 + rng.randrange(8)):
        lines += [f"      - alert: Service{rule}HighErrorRate",
                  f"        expr: job:errors:ratio5m{{service=\"svc-{rule}\"}} > {0.01 * (1 + (step + rule) % 9):.2f}",
                  f"        for: {1 + (step * rule) % 10}m",
                  "        labels: {severity: page}"]
    return "\n".join(lines) + "\n"


def trajectory(run_id: str, steps: int, catalog: list[dict], seed: int) -> tuple[dict, float]:
    rng = random.Random(seed)
    state = ["0" if c % 5 else "1" for c in range(len(catalog))]
    level = 0.0
    keys = {"reward": 0.0, "solved": False}

    def grade(delta_level: float) -> dict:
        failed = {catalog[c]["id"]: f"expected firing at {60 + c % 30}m; got nothing ({rng.randrange(100)})"
                  for c in range(len(catalog)) if state[c] == "0" and rng.random() < 0.05}
        return {"reward": level, "delta": delta_level, "checks": "".join(state), "keys": keys, "failed": failed}

    out = [{"step_id": 1, "source": "user", "message": "# Bench task\n\nMake every service page on its SLO.\n",
            "extra": {"grade": grade(0.0)}}]
    for step_id in range(2, steps + 1):
        call = f"call-{step_id}"
        if step_id % 3 == 0:
            path = f"rules/r{step_id % 20}.yml"
            tool = {"tool_call_id": call, "function_name": "write_file",
                    "arguments": {"path": path, "content": rule_file(step_id, rng)}}
            for _ in range(rng.randrange(1, 12)):
                c = rng.randrange(len(catalog))
                state[c] = "1" if state[c] == "0" else ("0" if rng.random() < 0.3 else "1")
            new_level = round(sum(s == "1" for s in state) / len(state), 6)
            delta, level = round(new_level - level, 6), new_level
            step_grade = grade(delta)
            output = f"wrote {path} ({step_grade['checks'].count('1')} checks pass)"
        else:
            path = f"rules/r{step_id % 20}.yml"
            tool = {"tool_call_id": call, "function_name": "read_file", "arguments": {"path": path}}
            step_grade = None
            output = rule_file(step_id - 1, rng)
        step = {"step_id": step_id, "source": "agent", "message": f"Step {step_id}: work on {path}.",
                "tool_calls": [tool], "observation": {"results": [{"source_call_id": call, "content": output}]}}
        if step_grade is not None:
            step["extra"] = {"grade": step_grade}
        out.append(step)
    document = {"schema_version": "ATIF-v1.6", "session_id": run_id,
                "agent": {"name": "policy:bench", "version": "0.1.0"}, "steps": out}
    return document, level


def write_run(root: Path, run_id: str, steps: int, catalog: list[dict], seed: int) -> None:
    folder = root / run_id
    folder.mkdir(parents=True)
    document, level = trajectory(run_id, steps, catalog, seed)
    (folder / "trajectory.json").write_text(json.dumps(document))
    summary = {
        "version": 1, "run_id": run_id, "kind": "alerting", "status": "complete",
        "task": {"id": TASK_ID, "dir": "no-such-task-folder", "workflow": "create", "tier": 2, "seed": 1},
        "policy": ("oracle", "partial", "nop", "llm")[seed % 4], "seed": seed,
        "model": None if seed % 4 != 3 else f"model-{seed % 5}",
        "agent": {"name": "policy:bench", "version": "0.1.0"}, "steps": steps - 1,
        "final": {"reward": level, "solved": level == 1.0, "keys": {"reward": level, "solved": level == 1.0}},
        "requirements": requirements(), "checks": catalog,
    }
    (folder / "run.json").write_text(json.dumps(summary))


def generate(root: Path, steps: int, check_count: int, run_count: int) -> Path:
    """A folder of run folders: one big run and ``run_count - 1`` runs of 6 steps."""
    catalog = checks(check_count)
    runs = root / "runs"
    write_run(runs, BIG_RUN, steps, catalog, 0)
    for number in range(1, run_count):
        write_run(runs, f"bench-small-{number:05d}", 6, catalog, number)
    return runs

