"""Write the site's JSDoc typedefs from the committed JSON Schemas of its data files.

Usage::

    .venv/bin/python scripts/site_types.py            # writes site/static/js/lib/site-types.js
    .venv/bin/python scripts/site_types.py --check    # exit 1 when that file is out of date

Every ``docs/schemas/site-*.schema.json`` (written by ``python -m contract.schemas`` from the
models in ``contract/site.py``) becomes ``@typedef`` blocks: one per schema (named by its
``title``) and one per ``$defs`` entry, each property typed (``$ref`` by its name, ``anyOf``
as a union, arrays, ``additionalProperties`` as ``Object<string, T>``, ``enum`` as a union of
literals), optional properties (not ``required``) marked ``[name]``. The file is a script,
so its typedefs are global to the type check: the viewer's modules name them in JSDoc
(``@returns {Promise<RunDocument>}``) without an import (the bundler would follow one), and CI
checks those modules with ``tsc --noEmit -p site`` (``site/tsconfig.json``): the pages keep
no build step.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from generated_file import write_or_check

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "docs" / "schemas"
OUT = ROOT / "site" / "static" / "js" / "lib" / "site-types.js"
SCALARS = {"string": "string", "integer": "number", "number": "number", "boolean": "boolean",
           "null": "null"}


def js_type(schema: dict) -> str:
    """The JSDoc type of one JSON Schema node (``*`` when the schema says nothing)."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "enum" in schema:
        return "(" + "|".join(json.dumps(value) for value in schema["enum"]) + ")"
    if "const" in schema:
        return json.dumps(schema["const"])
    if "anyOf" in schema or "oneOf" in schema:
        parts = [js_type(part) for part in schema.get("anyOf") or schema["oneOf"]]
        return "(" + "|".join(dict.fromkeys(parts)) + ")"
    kind = schema.get("type")
    if isinstance(kind, list):
        return "(" + "|".join(js_type({**schema, "type": k}) for k in kind) + ")"
    if kind == "array":
        items = schema.get("items")
        return f"Array<{js_type(items) if isinstance(items, dict) else '*'}>"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and not schema.get("properties"):
            return f"Object<string, {js_type(extra)}>"
        return "Object<string, *>"
    return SCALARS.get(kind, "*")


def typedef(name: str, schema: dict) -> str:
    """One ``@typedef`` block of an object schema, its description first."""
    description = " ".join((schema.get("description") or "").split())
    lines = ["/**"]
    if description:
        lines.append(f" * {description}")
    lines.append(f" * @typedef {{Object}} {name}")
    required = set(schema.get("required") or [])
    for prop, sub in (schema.get("properties") or {}).items():
        shown = prop if prop in required else f"[{prop}]"
        lines.append(f" * @property {{{js_type(sub)}}} {shown}")
    lines.append(" */")
    return "\n".join(lines)


def render() -> str:
    """The whole site-types.js text, schemas in name order, each $defs entry once."""
    blocks: dict[str, str] = {}
    for path in sorted(SCHEMAS.glob("site-*.schema.json")):
        schema = json.loads(path.read_text(encoding="utf-8"))
        for name, sub in sorted((schema.get("$defs") or {}).items()):
            if sub.get("type") == "object" or "properties" in sub:
                blocks.setdefault(name, typedef(name, sub))
        blocks.setdefault(schema["title"], typedef(schema["title"], schema))
    head = ("// The site's data files as JSDoc types, written by scripts/site_types.py from\n"
            "// docs/schemas/site-*.schema.json (contract/site.py): do not edit by hand.\n"
            "// A script, not a module: its typedefs are global to the type check (tsc -p site), and\n"
            "// no page loads it (the bundler only follows real imports).\n")
    return head + "\n" + "\n\n".join(blocks.values()) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) site-types.js; returns the exit code."""
    return write_or_check(OUT, render(), ROOT, "python scripts/site_types.py", argv, __doc__.splitlines()[0])


if __name__ == "__main__":
    sys.exit(main())
