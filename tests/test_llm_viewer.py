"""The viewer shows the shipped real model runs (examples/llm-runs/: SmolLM2-135M on
llama-cpp-python's server) with their model, server version, model sha256 and token figures,
and each reply quirk with its raw reply; the panels pass axe."""

from __future__ import annotations

import json

import pytest
from axe_playwright_python.sync_playwright import Axe
from test_accessibility import serious_violations

from alertforge.cli.site import LLM_EXAMPLES, import_demo_llm_runs
from contract.files import read_json
from exporter.export import export_site
from exporter.serve import serve_in_background

pytestmark = pytest.mark.browser

MODEL_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"


def test_every_shipped_model_run_names_the_server_version_and_the_model_sha256():
    runs = sorted(p for p in LLM_EXAMPLES.iterdir() if (p / "run.json").is_file())
    assert len(runs) >= 5
    for run in runs:
        summary = read_json(run / "run.json")
        assert summary["policy"] == "llm" and summary["status"] == "complete", run.name
        endpoint = summary["endpoint"]
        assert endpoint["server"] == "\U0001f999 llama.cpp Python API", run.name
        assert endpoint["server_version"] == "0.3.36", run.name
        assert endpoint["model_file"]["sha256"] == MODEL_SHA256, run.name
        assert endpoint["model_file"]["path"] in endpoint["models"], run.name


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory):
    """The shipped model runs imported as the demo imports them, exported and served."""
    runs = tmp_path_factory.mktemp("llm-demo-runs")
    copies = import_demo_llm_runs(runs)
    out = tmp_path_factory.mktemp("llm-demo-site")
    export_site([runs], out)
    server, url = serve_in_background(out, port=0, host="127.0.0.1")
    yield out, url, copies
    server.shutdown()
    server.server_close()


def _quirky_step(run_file: dict) -> tuple[int, dict] | None:
    return next(((s["n"], s["llm"]) for s in run_file["steps"]
                 if s.get("llm") and s["llm"]["quirks"]), None)


def test_the_run_view_shows_model_server_sha256_tokens_and_quirks(demo_site, page):
    out, url, copies = demo_site
    run_files = {p.stem: read_json(p) for p in (out / "data" / "runs").glob("*.json")}
    assert sorted(run_files) == sorted(c.name for c in copies)
    # a run in which the real server's replies had quirks (af-001 with the GGUF template:
    # two prose replies cut at max_tokens; af-027: arguments cut at the context window, then
    # the context-length refusal)
    run_id = next(rid for rid, doc in sorted(run_files.items()) if _quirky_step(doc))
    run_file = run_files[run_id]
    block = run_file["llm"]
    page.goto(f"{url}run.html?run={run_id}&step=1")
    page.wait_for_selector("body[data-ready='1']")
    assert page.is_visible("#run-model")
    field = lambda name: page.inner_text(f"#run-model-meta [data-field='{name}'] dd")
    assert field("model") == run_file["model"]
    assert field("server") == "\U0001f999 llama.cpp Python API 0.3.36"
    assert field("model-sha256") == MODEL_SHA256
    assert field("prompt-tokens") == f"{block['prompt_tokens']:,}" and block["prompt_tokens"] > 0
    assert field("completion-tokens") == f"{block['completion_tokens']:,}"
    assert field("malformed") == str(block["malformed_calls"])
    first = run_file["steps"][1]["llm"]
    assert page.is_visible("#step-model-box")
    assert page.inner_text("#step-model-figures [data-field='prompt-tokens']") == \
        f"{first['prompt_tokens']:,} prompt tokens"
    shown = page.eval_on_selector_all("#run-model-quirks [data-quirk]", "els => els.map(e => e.dataset.quirk)")
    assert shown == list(block["quirks"]) and shown
    n, part = _quirky_step(run_file)
    page.goto(f"{url}run.html?run={run_id}&step={n}")
    page.wait_for_selector("body[data-ready='1']")
    shown = page.eval_on_selector_all("#step-model-quirks li.model-quirk", "els => els.map(e => e.dataset.quirk)")
    assert shown == [q["code"] for q in part["quirks"]]
    assert page.is_visible("#step-model-raw-box")
    page.click("#step-model-raw-box summary")
    raw = json.loads(page.inner_text("#step-model-raw"))
    expected = {"reply": part.get("raw_reply"), "stopped": part.get("stopped"),
                "replies_without_tool_call": part.get("raw_replies") or part.get("replies")}
    assert raw == {key: value for key, value in expected.items() if value} and raw
    assert serious_violations(Axe(), page) == []  # the model panel and an open model turn
    page.goto(f"{url}run.html?run={run_id}&step=0")  # the initial state: no model turn
    page.wait_for_selector("body[data-ready='1']")
    assert not page.is_visible("#step-model-box")
    assert page.page_errors == []
