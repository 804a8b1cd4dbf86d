"""The site's stylesheets, cut from the one source (site/static/app.css) by its ``@only`` regions.

Every page but the run view loads the whole stylesheet (``static/app.css``). The run view loads
``static/run.css``: the whole less the rules only other pages use (the home page's run list and
filters, the compare view, the failure gallery) and less the episode board's, which an episode's
run view loads as ``static/episode.css`` with the board's modules (site/static/js/pages/run.js);
an alerting run's first step needs none of them (issue 32: the bytes before the first step).

A region opens with a line ``/* @only NAME */`` (NAME one of :data:`REGIONS`) and closes with a
line ``/* @end */``; regions do not nest. The rules keep their order in every output, so no rule
wins over another in a cut stylesheet that did not in the whole one.
"""

from __future__ import annotations

import re
from pathlib import Path

from contract.errors import BadInput

REGIONS = ("home", "compare", "gallery", "episode")
"""What an ``@only`` region may be for: a page other than the run view, or an episode's board."""
OPEN = re.compile(r"^/\* @only ([a-z]+) \*/$")
CLOSE = "/* @end */"


def split_stylesheet(path: Path, text: str) -> dict[str, str]:
    """``text`` (the stylesheet at ``path``) as ``{"static/app.css": every rule,
    "static/run.css": the rules outside the regions, "static/episode.css": the episode
    regions' rules}``, unminified, the region lines left out.

    Raises:
        BadInput: a region of an unknown name, one opened inside another, an ``@end`` with none
            open, or one left open (each names its line).
    """
    outputs: dict[str, list[str]] = {"app": [], "run": [], "episode": []}
    region: str | None = None
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip()
        opened = OPEN.match(stripped)
        if opened:
            if opened.group(1) not in REGIONS:
                raise BadInput(path, f"line {number}: unknown @only region {opened.group(1)!r} (one of {', '.join(REGIONS)})")
            if region is not None:
                raise BadInput(path, f"line {number}: @only {opened.group(1)} inside @only {region}")
            region = opened.group(1)
            continue
        if stripped == CLOSE:
            if region is None:
                raise BadInput(path, f"line {number}: @end with no @only region open")
            region = None
            continue
        outputs["app"].append(line)
        if region is None:
            outputs["run"].append(line)
        elif region == "episode":
            outputs["episode"].append(line)
    if region is not None:
        raise BadInput(path, f"the @only {region} region is never closed (/* @end */)")
    return {f"static/{name}.css": "\n".join(lines) for name, lines in outputs.items()}
