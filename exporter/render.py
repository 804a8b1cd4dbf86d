"""Render the site's pages from site/templates with jinja2 (autoescape on for every template)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2

from alertforge.errors import BadInput

PAGES = ("index.html", "run.html")


def format_reward(value: Any) -> str:
    """A reward as text with 4 decimals ("0.4215"); anything not a number as an em dash."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "\u2014"
    return f"{value:.4f}"


def format_rate(value: Any) -> str:
    """A rate in 0..1 as a whole percentage ("67%")."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "\u2014"
    return f"{value * 100:.0f}%"


def template_environment(templates_dir: Path) -> jinja2.Environment:
    """A jinja2 environment over ``templates_dir``: autoescape on for all templates, strict undefined."""
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["reward"] = format_reward
    environment.filters["rate"] = format_rate
    return environment


def render_pages(templates_dir: Path, index: dict[str, Any]) -> dict[str, bytes]:
    """Every page as ``{file name: UTF-8 bytes}``: index.html (runs table, leaderboard) and run.html.

    The pages get the ``index`` document (data/index.json) as ``index``; run.html is a shell
    that static/run.js fills from data/ at view time.

    Raises:
        BadInput: the templates folder is missing or a template cannot be loaded or rendered.
    """
    if not templates_dir.is_dir():
        raise BadInput(templates_dir, "templates folder not found")
    environment = template_environment(templates_dir)
    pages = {}
    for name in PAGES:
        try:
            html = environment.get_template(name).render(index=index, page=name)
        except jinja2.TemplateError as err:
            raise BadInput(templates_dir / name, f"template error: {err}") from None
        pages[name] = html.encode("utf-8")
    return pages
