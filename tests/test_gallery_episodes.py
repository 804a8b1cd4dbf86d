"""Failure gallery of action episodes: penalized steps of the 16 ARIA episodes, by ARIA's penalty kind.

The counts the pages show are checked against counts computed here from the transcripts
themselves (the raw requests, statuses, rewards and the texts ARIA answered: "not
applicable", "timed out", "COMPLIANCE VIOLATION"/"DATA LOSS"), not through the exporter's
own classification.
"""

from __future__ import annotations

import copy
import json
import re
from collections import defaultdict
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from conftest import fixture_tasks, readable

from exporter.export import export_site
from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes

TRANSCRIPTS = sorted(EXAMPLE_EPISODES.glob("*.json"))
FIXTURE_RUNS = Path(__file__).parent / "fixtures" / "site" / "runs"
ALERTING_FIXTURES = [
    path
    for path in sorted(FIXTURE_RUNS.iterdir())
    if json.loads((path / "run.json").read_bytes())["kind"] == "alerting"
]
NAMED_KINDS = ("collateral restart", "fix before diagnosis", "forbidden failover", "not applicable",
               "timed out")
TEXT_SAYS = ("not applicable", "timed out", "forbidden failover")
"""Kinds whose every step ARIA's answer names in its text (so the expectation is complete)."""
BLIND_FIX_TASKS = {"easy", "medium", "hard"}
"""Only these tasks call ARIA's blind-remediation penalty (tasks/base.py:322-334)."""


class GalleryParser(HTMLParser):
    """Examples (li[data-run-id] with their link), penalty-table rows and <script> tags."""

    def __init__(self) -> None:
        super().__init__()
        self.examples: list[dict[str, str]] = []
        self.rows: dict[str, dict[str, str]] = {}
        self.links: list[str] = []
        self.scripts = 0
        self._row: str | None = None
        self._field: str | None = None

    def handle_starttag(self, tag, attrs):
        values = {name: value or "" for name, value in attrs}
        if tag == "script" and values not in ({"id": "file-notice", "data-root": "../"},
                                              {"type": "module", "src": "../static/bundles/gallery.js"}):
            self.scripts += 1  # the page's own file notice and live-update bundle aside
        if tag == "a":
            self.links.append(values.get("href", ""))
            if self.examples and "href" not in self.examples[-1]:
                self.examples[-1]["href"] = values.get("href", "")
        if tag == "li" and "data-run-id" in values:
            self.examples.append(values)
        if tag == "tr" and "data-name" in values:
            self._row = values["data-name"]
            self.rows[self._row] = {}
        if tag == "td" and self._row is not None and "data-field" in values:
            self._field = values["data-field"]

    def handle_endtag(self, tag):
        if tag == "td":
            self._field = None
        if tag == "tr":
            self._row = None

    def handle_data(self, data):
        if self._row is not None and self._field is not None and data.strip():
            self.rows[self._row][self._field] = data.strip()


def parse(path: Path) -> GalleryParser:
    parser = GalleryParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def transcript_run_id(data: dict) -> str:
    return f"aria-{data['task_id']}__{data['variant']}__s{data['seed']}"


def _said(call: dict) -> str:
    observation = call["response"]["observation"]
    return f"{observation.get('last_action_error') or ''} {observation.get('last_action_result') or ''}"


def expected_penalties() -> dict[str, dict[str, list[int]]]:
    """{kind: {run_id: [step n, ...]}} from the raw transcripts: statuses, rewards and what
    ARIA's answer at that step says (the texts its task code sets with each penalty)."""
    found: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for path in TRANSCRIPTS:
        data = json.loads(path.read_bytes())
        run_id = transcript_run_id(data)
        previous = ""
        for n, call in enumerate(data["steps"], start=1):
            if call["status"] != 200:
                found["server error"][run_id].append(n)
                continue
            action = call["request"]["json"]
            reward, said = call["response"]["reward"], _said(call)
            fresh = said != previous  # ARIA keeps last_action_* until a step sets them again
            previous = said
            if reward < 0 and "not applicable" in said and (fresh or reward <= -0.1):
                found["not applicable"][run_id].append(n)
            if reward < 0 and "timed out" in said.lower():
                found["timed out"][run_id].append(n)
            if reward == -0.25 and ("COMPLIANCE VIOLATION" in said or "DATA LOSS" in said):
                found["forbidden failover"][run_id].append(n)
            if reward < 0 and "Collateral damage" in said and action["action_type"] == "restart_service":
                found["collateral restart"][run_id].append(n)
    return found


def transcript_steps() -> dict[str, list[dict]]:
    """{run_id: [None, step 1, step 2, ...]}: the transcripts' calls by site step n."""
    return {
        transcript_run_id(data): [None, *data["steps"]]
        for data in (json.loads(path.read_bytes()) for path in TRANSCRIPTS)
    }


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("episode-runs")
    assert len(import_episodes(TRANSCRIPTS, runs)) == 16
    out = tmp_path_factory.mktemp("gallery-episodes-site")
    export_site([runs, *ALERTING_FIXTURES], out, task_index=fixture_tasks())
    return out


def page_of(site: Path, kind: str) -> Path:
    return site / "gallery" / f"penalty-{kind.replace(' ', '-')}.html"


def test_the_gallery_index_lists_penalty_kinds_next_to_the_alerting_families(site):
    index = parse(site / "gallery" / "index.html")
    assert "family-syntax.html" in index.links and "kind-general.html" in index.links
    for kind in NAMED_KINDS:
        assert f"penalty-{kind.replace(' ', '-')}.html" in index.links
        assert page_of(site, kind).is_file()
    expected = expected_penalties()
    for kind in ("forbidden failover", "timed out", "server error"):
        row = index.rows[kind]
        assert row["runs_hit"] == str(len(expected[kind])), kind
        assert row["runs_with"] == "16"
        assert row["steps"] == str(sum(len(steps) for steps in expected[kind].values())), kind
    assert "wrong diagnosis" not in index.rows  # ARIA charges nothing for a diagnosis


@pytest.mark.parametrize("kind", ["forbidden failover", "timed out", "server error"])
def test_each_kind_page_counts_the_runs_and_steps_that_hit_it(site, kind):
    expected = expected_penalties()[kind]
    assert expected, f"the 16 transcripts have no {kind}"
    html = page_of(site, kind).read_text(encoding="utf-8")
    runs_hit = re.search(r'data-field="runs_hit">(\d+)<', html).group(1)
    steps = re.search(r'<span data-field="steps">(\d+)</span>; detail groups', html).group(1)
    assert int(runs_hit) == len(expected)
    assert int(steps) == sum(len(s) for s in expected.values())
    group_steps = [int(n) for n in re.findall(r'runs?, <span data-field="steps">(\d+)<', html)]
    assert sum(group_steps) == int(steps)
    listed = {(readable(e["data-run-id"]), int(e["data-step"])) for e in parse(page_of(site, kind)).examples}
    assert listed == {(run_id, n) for run_id, ns in expected.items() for n in ns}


def test_examples_link_to_the_penalized_step(site):
    calls = transcript_steps()
    pages = sorted((site / "gallery").glob("penalty-*.html"))
    assert len(pages) >= len(NAMED_KINDS)
    seen = 0
    for page in pages:
        kind = page.stem.removeprefix("penalty-").replace("-", " ")
        for example in parse(page).examples:
            href = urlsplit(example["href"])
            assert href.path == "../run.html", example
            query = parse_qs(href.query)
            run_id, n = query["run"][0], int(query["step"][0])
            assert (run_id, n) == (example["data-run-id"], int(example["data-step"]))
            call = calls[readable(run_id)][n]
            site_step = json.loads((site / "data" / "runs" / f"{run_id}.json").read_bytes())[
                "steps"
            ][n]
            if kind == "server error":
                assert call["status"] != 200 and site_step["env"]["error"] is not None
            else:
                if kind == "fix before diagnosis":
                    assert run_id.split("__")[0].removeprefix("aria-") in BLIND_FIX_TASKS
                if kind in TEXT_SAYS:
                    assert n in expected_penalties()[kind][readable(run_id)], (kind, run_id, n)
                # a penalty can sit in a positive reward (+0.40 fix - 0.05 before diagnosis)
                names = [c["name"] for c in site_step["env"]["components"] if c["amount"] < 0]
                assert kind in names, (kind, run_id, n)
                assert site_step["reward"] == call["response"]["reward"] == float(
                    example["data-reward"])
            seen += 1
    assert seen >= 40


def test_steps_of_one_action_are_grouped_by_detail(site):
    html = page_of(site, "collateral restart").read_text(encoding="utf-8")
    group = html.split('data-signature="restart_service(service=&#34;api-gateway&#34;)"')[1]
    group = group.split("</section>")[0]
    # easy-poor restarts api-gateway twice; failover-poor's restart is a timeout, not collateral
    assert '<span data-field="runs">1</span> run, <span data-field="steps">2</span> steps' in group
    assert "Collateral damage: api-gateway was healthy." in group


def test_every_negative_reward_is_on_some_penalty_page(site):
    listed = {
        (readable(e["data-run-id"]), int(e["data-step"]))
        for page in (site / "gallery").glob("penalty-*.html")
        for e in parse(page).examples
    }
    # groups list at most 12 examples; the noop group is the only larger one
    negatives = {
        (run_id, n)
        for run_id, calls in transcript_steps().items()
        for n, call in enumerate(calls)
        if n and call["status"] == 200 and call["response"]["reward"] < 0
        and call["request"]["json"]["action_type"] != "noop"
    }
    assert negatives and negatives <= listed


def test_run_text_in_details_is_escaped(tmp_path):
    data = json.loads((EXAMPLE_EPISODES / "easy-poor.json").read_bytes())
    data = copy.deepcopy(data)
    data["variant"] = "xss"
    data["steps"][0]["request"]["json"]["service"] = '<img src=x onerror="alert(1)">'
    data["steps"][4]["request"]["json"]["ip_range"] = "<script>window.__pwned=1</script>"
    data["steps"][0]["response"]["observation"]["last_action_error"] = "<b>healthy</b> & fine"
    source = tmp_path / "easy-xss.json"
    source.write_text(json.dumps(data), encoding="utf-8")
    runs = tmp_path / "runs"
    import_episodes([source], runs)
    out = tmp_path / "site"
    export_site([runs], out, task_index=fixture_tasks())
    for page in (out / "gallery").glob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert "<script>window" not in html and "<img src=x" not in html and "<b>" not in html
        assert parse(page).scripts == 0
    restart = page_of(out, "fix before diagnosis").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=" in restart and "&lt;b&gt;healthy&lt;/b&gt; &amp; fine" in restart
    applicable = page_of(out, "not applicable").read_text(encoding="utf-8")
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in applicable


def test_episode_runs_are_grouped_by_outcome(site):
    index = parse(site / "gallery" / "index.html")
    resolved = sum(1 for p in TRANSCRIPTS
                   if json.loads(p.read_bytes())["summary"]["last_info"].get("resolution"))
    assert index.rows["resolved"]["runs_hit"] == str(resolved)
    maxed = sum(1 for p in TRANSCRIPTS
                if json.loads(p.read_bytes())["summary"]["last_info"].get("reason"))
    assert index.rows["max steps reached"]["runs_hit"] == str(maxed)
    examples = parse(site / "gallery" / "outcome-resolved.html").examples
    assert len(examples) == resolved


def test_an_export_without_episodes_has_no_penalty_pages(tmp_path):
    export_site(ALERTING_FIXTURES, tmp_path / "site", task_index=fixture_tasks())
    assert not list((tmp_path / "site" / "gallery").glob("penalty-*.html"))
    assert "No episode runs." in (tmp_path / "site" / "gallery" / "index.html").read_text()
