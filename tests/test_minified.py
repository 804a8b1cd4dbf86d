"""The site's scripts and stylesheet are minified at export (exporter/minified.py): smaller,
the same behaviour (the viewer's browser tests run on these bundles), a parse error named."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from contract.errors import BadInput
from exporter.bundle import page_assets, page_bundles
from exporter.minified import CSS, JS, minified

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "site" / "static"


NESTED = """
const f = (a, b) => `${a ? `step ${a}, hunk ${b}` : `none`}  end`;
const r = /[/]{2} x/g;
const multi = `first line
    indented line ${f(1, 2)}`;
console.log(JSON.stringify([f(3, 4), f(0, 1), "a//b x".replace(r, "-"), multi, 1e-7, 0.1 + 0.2]));
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node to run the scripts")
def test_minified_javascript_prints_what_its_source_prints(tmp_path):
    # rJSmin's fault (exporter/bundle.py): ", hunk" inside a ${} of a template literal became ",hunk"
    out = minified(Path("x.js"), NESTED, JS)
    assert len(out) < len(NESTED)
    printed = []
    for name, text in (("source.js", NESTED), ("minified.js", out)):
        (tmp_path / name).write_text(text)
        printed.append(subprocess.run(["node", str(tmp_path / name)], capture_output=True, text=True, check=True).stdout)
    assert printed[0] == printed[1] and '"step 3, hunk 4  end"' in printed[0] and "    indented line" in printed[0]


def test_the_run_page_bundle_is_minified_and_still_registers_its_modules(tmp_path):
    files = page_bundles(STATIC / "js", "pages/run.js", "run")
    first = files["static/bundles/run.js"].decode()
    sources = sum(len((STATIC / "js" / name).read_text()) for name in ("pages/run.js", "components/checks.js", "lib/data.js"))
    assert len(first) < sources  # three of its modules' sources alone are longer than the whole bundle
    assert "\n  " not in first  # no indented lines left
    assert first.count('modules["') >= 10 and first.rstrip().endswith('__require("pages/run.js");')
    node = shutil.which("node")
    if node:  # every bundle file parses as a module
        for path, data in files.items():
            target = tmp_path / Path(path).name.replace(".js", ".mjs")
            target.write_bytes(data)
            assert subprocess.run([node, "--check", str(target)], check=False, capture_output=True).returncode == 0, path


def test_a_module_the_minifier_cannot_parse_is_bad_input_naming_it_and_its_line(tmp_path):
    js = tmp_path / "js"
    shutil.copytree(STATIC / "js", js)
    broken = js / "lib" / "format.js"
    lines = broken.read_text().split("\n")
    broken.write_text("\n".join([*lines, "const oops = ;", ""]))
    with pytest.raises(BadInput) as caught:
        page_bundles(js, "pages/run.js", "run")
    # the line in the module's own file, not in the bundle's text made of it (comments dropped, wrapped)
    assert "format.js" in str(caught.value) and f"not minified: unexpected ; in expression on line {len(lines) + 1}" in str(caught.value)


def test_text_the_minifier_would_turn_into_a_script_end_stays_as_written(tmp_path):
    from exporter.bundle import SCRIPT_END, bundle_script
    from exporter.render import inline_script

    js = tmp_path / "js"
    (js / "lib").mkdir(parents=True)
    (js / "lib" / "a.js").write_text('export const end = "\\x3c/script>" + `<\\/SCRIPT>`;\nexport const other = 1 + 2;\n')
    (js / "lib" / "b.js").write_text("export const b = 3 + 4;\n")
    script = bundle_script(js, 'import("./lib/a.js");')
    assert not SCRIPT_END.search(script) and "3+4" in script, "a.js as written, b.js minified"
    (tmp_path / "inline.js").write_text('window.x = "\\u003c/script>";\n')
    text, _ = inline_script(tmp_path, "inline.js")
    assert not SCRIPT_END.search(str(text))


def test_the_stylesheet_is_minified_and_keeps_its_rules():
    css = page_assets(STATIC)["static/app.css"].decode()
    source = (STATIC / "app.css").read_text()
    assert len(css) < len(source) * 0.9
    assert "/*" not in css and "prefers-color-scheme:dark" in css.replace(" ", "")
    assert minified(Path("a.css"), "a { color: #ff0000 ; }", CSS) == "a{color:red}"
