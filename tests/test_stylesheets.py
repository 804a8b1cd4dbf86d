"""The stylesheet cut by its @only regions (exporter/stylesheets.py): the run view's run.css
without the other pages' and the episode board's rules, episode.css with the board's."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.errors import BadInput
from exporter.bundle import page_assets
from exporter.stylesheets import split_stylesheet

ROOT = Path(__file__).resolve().parent.parent
SOURCE = """a { color: red; }
/* @only home */
.runs-table { x: 1; }
/* @end */
b { color: blue; }
/* @only episode */
.episode-grid { display: grid; }
/* @end */
/* @only compare */
.compare-line { y: 2; }
/* @end */
c { color: green; }"""


def test_the_regions_cut_the_run_and_episode_stylesheets_and_keep_the_order():
    out = split_stylesheet(Path("app.css"), SOURCE)
    assert out["static/app.css"].split("\n") == [line for line in SOURCE.split("\n") if "@only" not in line and "@end" not in line]
    assert out["static/run.css"].split("\n") == ["a { color: red; }", "b { color: blue; }", "c { color: green; }"]
    assert out["static/episode.css"] == ".episode-grid { display: grid; }"


@pytest.mark.parametrize("text, says", [
    ("/* @only phones */\na{}\n/* @end */", "line 1: unknown @only region 'phones'"),
    ("/* @only home */\n/* @only episode */\n/* @end */", "line 2: @only episode inside @only home"),
    ("a{}\n/* @end */", "line 2: @end with no @only region open"),
    ("/* @only gallery */\na{}", "the @only gallery region is never closed"),
])
def test_a_region_that_is_not_well_formed_is_bad_input_naming_its_line(text, says):
    with pytest.raises(BadInput, match=says) as caught:
        split_stylesheet(Path("site/static/app.css"), text)
    assert caught.value.path == "site/static/app.css"


def test_the_sites_run_stylesheet_holds_no_rule_of_the_other_pages_or_the_board():
    assets = {name: data.decode() for name, data in page_assets(ROOT / "site" / "static").items() if name.endswith(".css")}
    assert set(assets) == {"static/app.css", "static/run.css", "static/episode.css"}
    run, whole, episode = assets["static/run.css"], assets["static/app.css"], assets["static/episode.css"]
    for only_elsewhere in (".runs-table", ".compare-line", ".failure-examples", "#episode-curve .clamp-line", ".episode-grid{"):
        assert only_elsewhere in whole and only_elsewhere not in run
    assert "#episode-curve .clamp-line" in episode and ".runs-table" not in episode
    for shared in (".check-label", ".search-form", ".badge-fail", ".small{", ".skip-link", "prefers-color-scheme:dark"):
        assert shared in run, shared
    assert len(run) < 0.75 * len(whole)
