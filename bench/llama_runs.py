"""Real model runs: a local llama.cpp server with SmolLM2-135M, ``--policy llm`` on the
3ambench-mini tasks (and ARIA episodes with ``--aria-url``), exported; prints the figures.

Steps: ``scripts/llama-setup.sh VENV`` builds (about 5 min on 2 cores: llama-cpp-python is
compiled from source) or reuses the venv; the server starts on 127.0.0.1 (a free port, one
thread, ``--chat_format chatml-function-calling``, ``--n_ctx``); each task is recorded with
``alertforge record --policy llm`` (seed 0, temperature 0); the runs are exported with
``alertforge export``. Prints per run: status, agent steps, reward, recording seconds,
prompt and completion tokens, model turns, malformed tool calls and reply quirks, and the
server's version and model sha256 as run.json names them; ``--json FILE`` writes the same.
``--examples DIR`` copies the run folders there (examples/llm-runs/ is what the demo imports).

Usage: .venv/bin/python bench/llama_runs.py --venv /opt/llama/venv --out build/llama
       [--max-steps 6] [--n-ctx 2048] [--timeout 600] [--chat-format default --max-tokens 96]
       [--seed 1] [--tasks ID,...] [--aria-url http://127.0.0.1:7860] [--examples DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from contract.files import read_json
from contract.paths import TASKS_DIR
from contract.processes import die_with_parent
from exporter.llm_turns import llm_part

ROOT = Path(__file__).resolve().parent.parent
SETUP = ROOT / "scripts" / "llama-setup.sh"
MODEL_NAME = "smollm2-135m-instruct-q4_1"
KEY_ENV = "ALERTFORGE_LLAMA_KEY"
MINI = [entry["path"].split("/")[-1] for entry in next(
    d for d in read_json(TASKS_DIR / "registry.json") if d["name"] == "3ambench-mini")["tasks"]]


def setup(venv: Path) -> dict[str, str]:
    """Run scripts/llama-setup.sh; its KEY=VALUE lines and ``SETUP_S`` (seconds)."""
    started = time.perf_counter()
    out = subprocess.run(["bash", str(SETUP), str(venv)], capture_output=True, text=True,
                         check=False)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        sys.exit(f"llama-setup.sh failed (exit {out.returncode})")
    values = dict(line.split("=", 1) for line in out.stdout.splitlines() if "=" in line)
    values["SETUP_S"] = f"{time.perf_counter() - started:.1f}"
    return values


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(setup_values: dict[str, str], args: argparse.Namespace,
                 log: Path) -> tuple[subprocess.Popen, str]:
    """The llama.cpp server process and its /v1 base URL, once /v1/models answers."""
    port = free_port()
    command = [str(Path(setup_values["VENV"]) / "bin" / "python"), "-m", "llama_cpp.server",
               "--model", setup_values["MODEL_PATH"], "--host", "127.0.0.1", "--port", str(port),
               "--n_ctx", str(args.n_ctx), "--n_threads", "1", "--n_threads_batch", "1"]
    if args.chat_format != "default":
        command += ["--chat_format", args.chat_format]
    handle = open(log, "w", encoding="utf-8")  # noqa: SIM115 (the server's lifetime)
    parent = os.getpid()
    process = subprocess.Popen(command, stdout=handle, stderr=subprocess.STDOUT,
                               preexec_fn=lambda: die_with_parent(parent))  # noqa: PLW1509 (no threads here)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"the llama.cpp server exited ({process.returncode}); see {log}")
        try:
            with urllib.request.urlopen(url + "/models", timeout=5):
                return process, url
        except OSError:
            time.sleep(0.5)
    stop_server(process)
    sys.exit(f"the llama.cpp server did not answer within 180 s; see {log}")


def stop_server(process: subprocess.Popen) -> None:
    """Stop the server (it does not act on SIGTERM while generating: killed after 10 s)."""
    for stop in (process.terminate, process.kill):
        stop()
        try:
            process.wait(timeout=10)
            return
        except subprocess.TimeoutExpired:
            continue


def record(args: argparse.Namespace, url: str, runs: Path, task: str, aria: bool) -> dict:
    """One ``alertforge record`` run; ``{task, exit, seconds, run_dir, stderr}``."""
    command = [sys.executable, "-m", "alertforge.cli", "record", "--task", task, "--policy", "llm",
               "--model", MODEL_NAME, "--base-url", url, "--api-key-env", KEY_ENV,
               "--temperature", "0", "--timeout", str(args.timeout), "--out", str(runs),
               "--max-steps", str(args.max_steps), "--max-retries", "0"]
    if args.max_tokens:
        command += ["--max-tokens", str(args.max_tokens)]
    if aria:
        command += ["--env", "aria", "--env-url", args.aria_url, "--seed", str(args.seed or 42)]
    else:
        command += ["--seed", str(args.seed)]
    started = time.perf_counter()
    out = subprocess.run(command, capture_output=True, text=True, check=False, cwd=ROOT,
                         env={**os.environ, KEY_ENV: "local-llama-no-auth"})
    seconds = round(time.perf_counter() - started, 1)
    lines = out.stdout.strip().splitlines()
    return {"task": task, "exit": out.returncode, "seconds": seconds,
            "run_dir": lines[-1] if out.returncode == 0 and lines else None,
            "stderr": out.stderr.strip()[-400:]}


def figures(result: dict) -> dict:
    """The run's figures from its run.json and trajectory.json."""
    if not result["run_dir"]:
        return result
    run_dir = Path(result["run_dir"])
    summary = read_json(run_dir / "run.json")
    steps = read_json(run_dir / "trajectory.json")["steps"]
    parts = [part for part in (llm_part(step) for step in steps) if part]
    quirks: dict[str, int] = {}
    for part in parts:
        for quirk in part["quirks"]:
            quirks[quirk["code"]] = quirks.get(quirk["code"], 0) + 1
    endpoint = summary.get("endpoint") or {}
    return {**result, "status": summary["status"], "steps": summary["steps"] - 1,
            "reward": (summary.get("final") or {}).get("reward"),
            "turns": sum(1 for p in parts if p["llm_calls"]),
            "prompt_tokens": sum(p.get("prompt_tokens", 0) for p in parts),
            "completion_tokens": sum(p.get("completion_tokens", 0) for p in parts),
            "malformed_calls": sum(int(p["malformed"]) for p in parts),
            "tools_called": [(s.get("tool_calls") or [{}])[0].get("function_name")
                             for s in steps[1:]],
            "quirks": quirks, "server": endpoint.get("server"),
            "server_version": endpoint.get("server_version"),
            "model_sha256": (endpoint.get("model_file") or {}).get("sha256")}


def print_table(rows: list[dict], header: bool = True) -> None:
    if header:
        print(f"{'run':<44} {'status':<9} {'steps':>5} {'reward':>7} {'s':>7} {'prompt':>7} "
              f"{'compl':>6} {'turns':>5} {'malf':>4}  quirks")
    for row in rows:
        if not row.get("run_dir"):
            print(f"{row['task']:<44} FAILED exit {row['exit']} after {row['seconds']} s: {row['stderr']}")
            continue
        reward = row["reward"] if row["reward"] is not None else float("nan")
        print(f"{row['task']:<44} {row['status']:<9} {row['steps']:>5} {reward:>7.4f} "
              f"{row['seconds']:>7.1f} {row['prompt_tokens']:>7} {row['completion_tokens']:>6} "
              f"{row['turns']:>5} {row['malformed_calls']:>4}  "
              + ", ".join(f"{k} x{v}" for k, v in sorted(row["quirks"].items())))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", default=str(Path.home() / ".cache" / "alertforge" / "llama-venv"),
                        help="the llama-cpp-python venv to build or reuse")
    parser.add_argument("--out", default=str(ROOT / "build" / "llama"))
    parser.add_argument("--max-steps", type=int, default=6, help="agent steps per run at most")
    parser.add_argument("--n-ctx", type=int, default=2048, help="the server's context window")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per model reply")
    parser.add_argument("--chat-format", default="chatml-function-calling",
                        help="the server's --chat_format; 'default': the GGUF's own template "
                        "(it ignores tools: the model answers in prose)")
    parser.add_argument("--max-tokens", type=int, help="completion tokens per reply (ignored by "
                        "chatml-function-calling when it chooses a tool)")
    parser.add_argument("--seed", type=int, default=0, help="the runs' seed (sent to the server)")
    parser.add_argument("--tasks", help="comma-separated task ids (default: 3ambench-mini)")
    parser.add_argument("--aria-url", help="also record ARIA episodes from this server")
    parser.add_argument("--aria-tasks", default="easy", help="comma-separated ARIA task ids")
    parser.add_argument("--examples", help="copy the run folders into this folder")
    parser.add_argument("--json", help="write the figures as JSON here")
    args = parser.parse_args(argv)
    out = Path(args.out)
    runs = out / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    values = setup(Path(args.venv))
    print(f"setup: {values['SETUP_S']} s; llama-cpp-python {values['LLAMA_CPP_PYTHON_VERSION']}, "
          f"model {values['MODEL_PATH']} sha256 {values['MODEL_SHA256']}")
    server, url = start_server(values, args, out / "server.log")
    rows = []
    try:
        jobs = [(task, False) for task in (args.tasks.split(",") if args.tasks else MINI)]
        if args.aria_url:
            jobs += [(task, True) for task in args.aria_tasks.split(",")]
        for task, aria in jobs:
            rows.append(figures(record(args, url, runs, task, aria)))
            print_table(rows[-1:], header=len(rows) == 1)
    finally:
        stop_server(server)
    print()
    print_table(rows)
    exported = subprocess.run([sys.executable, "-m", "alertforge.cli", "export", str(runs), "--out",
                               str(out / "site")], capture_output=True, text=True, check=False, cwd=ROOT)
    print(exported.stdout.strip() or exported.stderr.strip())
    if args.examples:
        for row in rows:
            if row.get("run_dir"):
                target = Path(args.examples) / Path(row["run_dir"]).name
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(row["run_dir"], target)
        print(f"copied {sum(1 for r in rows if r.get('run_dir'))} runs into {args.examples}")
    if args.json:
        Path(args.json).write_text(json.dumps({"setup": values, "runs": rows}, indent=2) + "\n")
    return 0 if all(row.get("run_dir") for row in rows) and exported.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
