"""Field cases of the trust boundary: parallel tool results paired by id (orphans kept and
flagged), and text cut or split only on character boundaries, never over a cap, never
splitting a secret; inline JSON escapes ``<``, U+2028 and U+2029.

Fixtures: tests/fixtures/cases/parallel-tool-results and utf8-truncation (copied from
../shared/cases, see their SOURCE.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import orjson
import pytest

from contract.text import cut_chars, split_chars, utf8_prefix
from exporter.export import export_site
from exporter.long_text import PART_CHARS, externalize_long_texts
from exporter.single_file import inline_data
from recorder.importers.harbor.importer import import_harbor

CASES = Path(__file__).parent / "fixtures" / "cases"
PARALLEL = CASES / "parallel-tool-results" / "parallel.trajectory.json"


def _import(tmp_path: Path, trajectory: dict) -> Path:
    source = tmp_path / "in" / "parallel.trajectory.json"
    source.parent.mkdir()
    source.write_text(json.dumps(trajectory))
    summary = import_harbor([source], tmp_path / "runs")
    assert summary["skipped"] == []
    return tmp_path / "runs" / summary["imported"][0]["run_id"]


def _with_orphan() -> dict:
    trajectory = json.loads(PARALLEL.read_text())
    trajectory["steps"][1]["observation"]["results"].insert(
        1, {"source_call_id": "call_zzz", "content": "ZZZ from nowhere"})
    return trajectory


def test_results_out_of_order_are_paired_with_their_calls(tmp_path):
    run = _import(tmp_path, json.loads(PARALLEL.read_text()))
    steps = json.loads((run / "trajectory.json").read_text())["steps"]
    pairs = {s["tool_calls"][0]["arguments"]["cmd"]: [r["content"] for r in s["observation"]["results"]]
             for s in steps if s.get("tool_calls")}
    assert pairs == {"sleep 5; echo AAA": ["AAA"], "sleep 1; echo BBB": ["BBB"], "echo CCC": ["CCC"]}


def test_an_orphaned_result_is_kept_flagged_and_never_paired(tmp_path):
    run = _import(tmp_path, _with_orphan())
    steps = json.loads((run / "trajectory.json").read_text())["steps"]
    results = [r for s in steps for r in (s.get("observation") or {}).get("results", [])]
    orphans = [r for r in results if (r.get("extra") or {}).get("orphan")]
    assert [o["content"] for o in orphans] == ["ZZZ from nowhere"]
    assert orphans[0]["extra"]["named_call_id"] == "call_zzz" and orphans[0].get("source_call_id") is None
    export_site([run], tmp_path / "site")
    site_run = json.loads((tmp_path / "site" / "data" / "runs" / f"{run.name}.json").read_bytes())
    shown = {s["tool"]["arguments"]["cmd"]: (s["output"], s.get("orphans", []))
             for s in site_run["steps"] if s["tool"]}
    assert shown["sleep 5; echo AAA"][0] == "AAA" and shown["sleep 1; echo BBB"][0] == "BBB"
    assert shown["echo CCC"][0] == "CCC"
    assert [o for _, (_, orphans) in shown.items() for o in orphans] == [
        {"call_id": "call_zzz", "content": "ZZZ from nowhere"}]


@pytest.mark.browser
def test_the_viewer_shows_an_orphan_apart_from_the_output(tmp_path, page):
    from exporter.serve import serve_in_background

    run = _import(tmp_path, _with_orphan())
    export_site([run], tmp_path / "site")
    server, url = serve_in_background(tmp_path / "site", port=0, host="127.0.0.1")
    try:
        site_run = json.loads((tmp_path / "site" / "data" / "runs" / f"{run.name}.json").read_bytes())
        n = next(s["n"] for s in site_run["steps"] if s.get("orphans"))
        page.goto(f"{url}run.html?run={run.name}&step={n}")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#step-orphans-box").is_visible()
        assert "ZZZ from nowhere" in page.locator("#step-orphans").inner_text()
        assert "ZZZ" not in page.locator("#step-output").inner_text()
        assert "call_zzz" in page.locator("#step-orphans").inner_text()
    finally:
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------------------ utf8-truncation


def test_byte_cuts_stay_on_character_boundaries_and_within_the_cap():
    text = "a🌍b🌎c"
    data = text.encode()
    for cap in range(len(data) + 1):
        cut = utf8_prefix(data, cap)
        assert len(cut.encode()) <= cap and "\ufffd" not in cut and text.startswith(cut)


def test_character_cuts_and_splits_keep_every_character_whole():
    text = "é🌍" * 1000
    assert cut_chars(text, 11) == text[:10] + "\u2026" and len(cut_chars(text, 11)) == 11
    parts = split_chars(text, 7)
    assert "".join(parts) == text and all(len(p) <= 7 for p in parts)
    for part in parts:
        assert part.encode("utf-8").decode("utf-8") == part  # no half character anywhere


def test_long_text_parts_split_on_characters_and_stay_under_the_cap():
    text = "🌍" * (PART_CHARS + 10)
    step = {"n": 1, "message": "", "output": text, "tool": None, "diff": None}
    stored, files = externalize_long_texts("r", [step])
    parts = [orjson.loads(files[name]) for name in stored[0]["lazy"]["output"]["parts"]]
    assert "".join(parts) == text and all(len(p) <= PART_CHARS for p in parts)
    assert all(isinstance(p, str) and "\ufffd" not in p for p in parts)


def test_a_secret_across_a_part_boundary_is_masked_before_the_split(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-oracle-s1",
                    runs / "fixture-oracle-s1")
    secret = "hf_" + "Zq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gE12"
    path = runs / "fixture-oracle-s1" / "trajectory.json"
    trajectory = json.loads(path.read_text())
    trajectory["steps"][1]["observation"]["results"][0]["content"] = (
        "x" * (PART_CHARS - 10) + secret + "y" * 2000)
    path.write_text(json.dumps(trajectory))
    export_site([runs], tmp_path / "site")
    parts = sorted((tmp_path / "site" / "data" / "text").rglob("*.json"), key=lambda p: int(p.stem.split(".")[-1]))
    texts = "".join(json.loads(p.read_text()) for p in parts)
    assert secret not in texts and secret[:12] not in texts and secret[-12:] not in texts
    assert "[REDACTED:huggingface-token]" in texts


def test_inline_json_escapes_script_ends_and_line_separators():
    payload = {"steps": [{"output": "</script><script>alert(1)</script>\u2028\u2029"}]}
    text = inline_data({"data/runs/r.json": orjson.dumps(payload)})
    assert "</script" not in text and "\u2028" not in text and "\u2029" not in text
    assert json.loads(text)["data/runs/r.json"] == payload
