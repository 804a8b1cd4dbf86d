"""Gallery pages split into parts of bounded size: every group once, in order, never split,
each part linked from the others (exporter.gallery.paginate, site/templates/_gallery_pager.html)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import fixture_tasks
from test_gallery import parse

from bench.big_site import write_runs
from exporter import gallery
from exporter.export import export_site
from exporter.gallery import paginate

FIXTURE_RUNS = Path(__file__).parent / "fixtures" / "site" / "runs"


def kind(examples_per_group: list[int]) -> dict:
    groups = [{"number": n, "examples": [{"run_id": f"r{n}-{i}"} for i in range(count)]}
              for n, count in enumerate(examples_per_group, start=1)]
    return {"file": "gallery/family-fire.html", "name": "Fire", "groups": groups, "words": gallery.FAMILY,
            "runs_with": 9, "runs_failing": 4, "checks": 5, "failures": 6}


def test_paginate_keeps_groups_whole_and_in_order_within_the_bound():
    parts = paginate(kind([12, 12, 3, 12, 1, 30, 2]), per_page=24)
    assert [[g["number"] for g in part["groups"]] for part in parts] == [[1, 2], [3, 4, 5], [6], [7]]
    assert [part["file"] for part in parts] == ["gallery/family-fire.html", "gallery/family-fire.p2.html",
                                                "gallery/family-fire.p3.html", "gallery/family-fire.p4.html"]
    assert all(part["pager"]["files"] == [p["file"] for p in parts] for part in parts)
    assert [part["pager"]["number"] for part in parts] == [1, 2, 3, 4]
    assert all(part["pager"]["groups_total"] == 7 for part in parts)
    counts = ("runs_with", "runs_failing", "checks", "failures")
    assert [tuple(part.get(key) for key in counts) for part in parts] == [(9, 4, 5, 6)] + [(None,) * 4] * 3, (
        "only the first part carries the kind's counts: one more run leaves the later parts as they were")
    over = [part for part in parts if sum(len(g["examples"]) for g in part["groups"]) > 24]
    assert [[g["number"] for g in part["groups"]] for part in over] == [[6]], "only a group alone may exceed"


def test_a_kind_without_groups_is_one_page():
    assert [(p["file"], p["groups"]) for p in paginate(kind([]))] == [("gallery/family-fire.html", [])]


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("pager")
    write_runs(root / "runs", 40, [FIXTURE_RUNS / "fixture-partial-s1", FIXTURE_RUNS / "fixture-oracle-s1"])
    patch = pytest.MonkeyPatch()
    patch.setattr(gallery, "EXAMPLES_PER_PAGE", 12)
    try:
        export_site([root / "runs"], root / "site", task_index=fixture_tasks())
    finally:
        patch.undo()
    return root / "site"


def test_split_pages_link_each_other_and_list_every_group_once(site):
    folder = site / "gallery"
    firsts = [p for p in folder.glob("*.html") if ".p" not in p.name and p.name != "index.html"]
    split = [p for p in firsts if (folder / f"{p.stem}.p2.html").exists()]
    assert split, "some kind has more than 12 examples"
    for first in split:
        parts = [first, *sorted(folder.glob(f"{first.stem}.p*.html"), key=lambda p: int(p.stem.rsplit(".p", 1)[1]))]
        numbers = []
        for number, part in enumerate(parts, start=1):
            html = part.read_text(encoding="utf-8")
            links = re.findall(r'<a class="button" href="([^"]+)" data-page="(\d+)"', html)
            assert {href for href, _ in links} == {p.name for p in parts if p != part}
            assert f'aria-current="page" data-page="{number}"' in html
            assert ("(page" in html.split("</title>")[0]) == (number > 1)
            assert ('id="gallery-summary"' in html) == (number == 1)
            if number > 1:
                assert f'its counts are on <a href="{first.name}">the first page</a>' in html
            groups = re.findall(r'aria-labelledby="group-(\d+)"', html)
            assert len(parse(part).examples) <= 12 or len(groups) == 1
            numbers += [int(n) for n in groups]
        assert numbers == list(range(1, len(numbers) + 1))


def test_the_big_site_generator_reads_source_runs_as_untrusted(tmp_path):
    from contract.untrusted import UnsafeInput

    source = tmp_path / "src" / "linked-run"
    source.mkdir(parents=True)
    (source / "run.json").write_bytes((FIXTURE_RUNS / "fixture-partial-s1" / "run.json").read_bytes())
    outside = tmp_path / "secret.json"
    outside.write_text('{"steps": []}')
    (source / "trajectory.json").symlink_to(outside)
    with pytest.raises(UnsafeInput, match="symbolic link"):
        write_runs(tmp_path / "out", 2, [source])
