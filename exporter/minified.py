"""The viewer's scripts and stylesheet as the site ships them: minified by tdewolff/minify.

Why a minifier, and why this one: the run page's bytes before its first step are mostly the page
bundle and the stylesheet (issue 32: 151 kB decoded against a 100 kB target), and whitespace,
long local names and the sources' comments are most of a bundle. tdewolff/minify (Go, through its
``tdewolff-minify`` Python binding: a wheel, no Node) parses JavaScript (ES2020 and later: nested
template literals, regular expressions, optional chaining) and CSS rather than scanning text, the
fault that kept rJSmin out (it dropped a space inside a template literal nested in another's
``${}``). Numbers keep every digit (``js-precision`` and ``css-precision`` 0, the defaults).

The sources under site/static stay as they are; the site's copies are made here at export.
"""

from __future__ import annotations

from pathlib import Path

import minify

from contract.errors import BadInput

JS = "application/javascript"
CSS = "text/css"


def minified(path: Path, text: str, media_type: str) -> str:
    """``text`` (the content of ``path``, or of a bundle made from the modules under it) minified
    as ``media_type`` (:data:`JS` or :data:`CSS`). The same text always gives the same output.

    Raises:
        BadInput: the minifier cannot parse ``text`` (its message names the line and column).
    """
    try:
        return minify.string(media_type, text)
    except minify.MinifyError as error:
        first = str(error).splitlines()[0] if str(error) else "cannot be parsed"
        raise BadInput(path, f"not minified: {first}") from None


def version() -> str:
    """The installed minifier's version (part of the bundle cache's key)."""
    from importlib.metadata import version as installed

    return installed("tdewolff-minify")
