"""Benchmark: the viewer on a generated 1,000-step run with 200 checks and a 1,000-run index.

Generates the runs, exports them, serves the site on 127.0.0.1 and drives Debian's Chromium
with Playwright (the test suite's flags). Prints: bytes loaded by the home page on first load,
time from navigation to the first step rendered (the run view's ``first-step-rendered``
performance mark: the step drawn from the run's head file, docs/formats.md; the median of
``--loads`` loads of the big run, the first from the home page, the others from the big run
itself), the phases of that load, and the median and p95 step-switch time measured inside the
page (a keydown event's timestamp to the step detail updated, style and layout included).
Targets: home <= 300 kB, first step <= 200 ms, step switch <= 9 ms median. Prints the
figures; asserts nothing.

Usage: .venv/bin/python bench/viewer.py [--steps 1000] [--checks 200] [--runs 1000] [--switches 300] [--loads 5]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from pathlib import Path

from exporter.export import export_site
from exporter.serve import serve_in_background

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
"""As tests/conftest.py launches it."""
TASK_ID = "bench-task"
BIG_RUN = "bench-big"
REQUIREMENTS = 20
FAMILIES = ("Fire", "Timing", "Silent", "Dup", "Label", "Route", "Preservation", "Syntax")

SWITCH_LOOP = """async (count) => {
  const detail = document.getElementById("step-detail");
  const times = [];
  for (let k = 0; k < count; k += 1) {
    const event = new KeyboardEvent("keydown", { key: "ArrowRight", bubbles: true, cancelable: true });
    performance.mark("switch-input");
    document.dispatchEvent(event);
    detail.getBoundingClientRect();
    document.body.offsetHeight;
    performance.mark("switch-updated");
    const measure = performance.measure("step-switch-full", "switch-input", "switch-updated");
    times.push(measure.duration);
    if (k % 20 === 19) await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  }
  return times;
}"""


PHASES = """() => {
  const navigation = performance.getEntriesByType("navigation")[0];
  const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
  return {
    "head file loaded": at("head-loaded"),
    "task file loaded": at("task-loaded"),
    "page parsed, modules run": navigation.domContentLoadedEventEnd,
    "first-step-rendered": at("first-step-rendered"),
    "first step painted": at("first-step-painted"),
    "run file loaded": at("run-loaded"),
    "views built": at("built-views"),
    "matrix built (ready)": at("built-matrix"),
  };
}"""


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


def measure(url: str, switches: int, loads: int = 5) -> dict:
    from playwright.sync_api import sync_playwright

    figures: dict = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(60_000)
        page = context.new_page()
        finished = []

        def collect(request) -> None:
            finished.append(request)

        page.on("requestfinished", collect)
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        page.wait_for_load_state("networkidle")
        sizes = [request.sizes() for request in finished]
        figures["home_bytes"] = sum(s["responseBodySize"] + s["responseHeadersSize"] for s in sizes)
        figures["home_body_bytes"] = sum(s["responseBodySize"] for s in sizes)
        figures["home_requests"] = len(sizes)
        page.remove_listener("requestfinished", collect)

        first = []
        for _ in range(loads):
            page.goto(f"{url}run.html?run={BIG_RUN}")
            page.wait_for_selector("body[data-ready='1']")
            first.append(page.evaluate(PHASES))
        figures["first_step_runs_ms"] = [phases["first-step-rendered"] for phases in first]
        first.sort(key=lambda phases: phases["first-step-rendered"])
        figures["first_step_ms"] = statistics.median(figures["first_step_runs_ms"])
        figures["first_step_phases"] = first[(len(first) - 1) // 2]
        times = page.evaluate(SWITCH_LOOP, switches)
        figures["switch_median_ms"] = statistics.median(times)
        figures["switch_p95_ms"] = sorted(times)[int(0.95 * (len(times) - 1))]
        js_only = page.evaluate(
            "() => performance.getEntriesByName('step-switch').map((entry) => entry.duration)")
        figures["switch_js_median_ms"] = statistics.median(js_only) if js_only else None
        browser.close()
    return figures


def main() -> None:
    """Generate, export, serve, measure and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--checks", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--switches", type=int, default=300)
    parser.add_argument("--loads", type=int, default=5, help="loads of the big run to time (median)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="alertforge-bench-viewer-") as temporary:
        root = Path(temporary)
        started = time.perf_counter()
        runs = generate(root, args.steps, args.checks, args.runs)
        generated = time.perf_counter()
        summary = export_site([runs], root / "site")
        exported = time.perf_counter()
        big = (root / "site" / "data" / "runs" / f"{BIG_RUN}.json").stat().st_size
        head = (root / "site" / "data" / "run-heads" / f"{BIG_RUN}.json").stat().st_size
        print(f"generated {args.runs} runs ({args.steps} steps x {args.checks} checks in the big one) "
              f"in {generated - started:.1f} s; exported {summary['files']} files, {summary['bytes']:,d} bytes "
              f"in {exported - generated:.1f} s; big run file {big:,d} bytes, its head {head:,d} bytes")
        server, url = serve_in_background(root / "site", port=0, host="127.0.0.1")
        try:
            figures = measure(url, args.switches, args.loads)
        finally:
            server.shutdown()
            server.server_close()
    print(f"home page, first load:  {figures['home_bytes']:,d} bytes ({figures['home_body_bytes']:,d} body, "
          f"{figures['home_requests']} requests)   target <= 300 kB")
    print(f"first step rendered:    {figures['first_step_ms']:.0f} ms (median of "
          f"{', '.join(f'{v:.0f}' for v in figures['first_step_runs_ms'])})   target <= 200 ms")
    print("  phases of the median load (ms from navigation): " + ", ".join(
        f"{name} {value:.0f}" for name, value in figures["first_step_phases"].items() if value is not None))
    print(f"step switch:            median {figures['switch_median_ms']:.2f} ms, p95 {figures['switch_p95_ms']:.2f} ms "
          f"(input event to step detail updated, layout included)   target <= 9 ms median")
    if figures["switch_js_median_ms"] is not None:
        print(f"step switch, JS only:   median {figures['switch_js_median_ms']:.2f} ms (nav.js step-switch measure)")


if __name__ == "__main__":
    main()
