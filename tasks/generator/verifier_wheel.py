"""Builds the verifier wheel that every task's ``tests/Dockerfile`` installs.

Harbor builds a task's verifier image from the task's ``tests/`` folder alone, so the grader
travels inside it: ``tests/alertforge_verifier-<version>-py3-none-any.whl`` holds the
``grader`` and ``contract`` packages (what ``python -m grader.verify`` imports) and names
PyYAML, orjson and pydantic as its dependencies (pip fetches those from the index it is
configured with; alertforge itself need not be on any index).

The wheel is a release artifact, committed once per grader release in
``tasks/verifier/`` and copied into every task by the generator, so a task folder (and
Harbor's ``task_checksum`` of it) changes when the release changes, not on every commit.
Rebuild it when the grader's version changes::

    python -m tasks.generator.verifier_wheel            # writes tasks/verifier/<wheel>
    python -m tasks.generator.verifier_wheel --check    # exit 1 if it differs from a fresh build

The build is reproducible: the package files are copied into a staging project (no caches,
sorted), built by a pinned setuptools with ``SOURCE_DATE_EPOCH`` fixed, so one source tree
gives one wheel, byte for byte.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from contract.errors import BadInput, ToolFailure
from contract.version import __version__

ROOT = Path(__file__).resolve().parents[2]
"""The checkout: the packages the wheel holds are copied from here."""

RELEASE_DIR = ROOT / "tasks" / "verifier"
"""Where the committed wheel of the current release lives."""

PACKAGES = ("grader", "contract")
"""The packages the verifier imports (grader.verify and everything it reaches)."""

DEPENDENCIES = ("pyyaml>=6.0", "orjson>=3.9", "pydantic>=2.5")
"""What those packages import beyond the standard library (checked by tests/test_verifier.py)."""

BUILD_BACKEND = "setuptools==80.9.0"
"""Pinned so the same sources give the same bytes on every machine."""

SOURCE_DATE_EPOCH = "315532800"
"""1980-01-01T00:00:00Z, the earliest date a zip entry can carry: every file's timestamp."""

WHEEL_NAME = f"alertforge_verifier-{__version__}-py3-none-any.whl"
"""The file name in tasks/verifier/ and in every task's tests/ folder."""

PYPROJECT = f"""\
[build-system]
requires = ["{BUILD_BACKEND}"]
build-backend = "setuptools.build_meta"

[project]
name = "alertforge-verifier"
version = "{__version__}"
description = "3amBench verifier: the alertforge grader (python -m grader.verify), for Harbor's verifier image"
requires-python = ">=3.11"
license = {{text = "Apache-2.0"}}
dependencies = [{", ".join(f'"{d}"' for d in DEPENDENCIES)}]

[tool.setuptools]
packages = {{find = {{include = [{", ".join(f'"{p}*"' for p in PACKAGES)}]}}}}
"""


def build(out_dir: Path) -> Path:
    """Build the wheel into ``out_dir`` (created if needed); returns its path.

    Runs ``pip wheel --no-deps`` on a staging copy of the ``.py`` files of :data:`PACKAGES`
    (the packages hold no other files; caches and stray files stay out). Needs the package index for the build backend. Raises
    ToolFailure when pip fails (its stderr tail in the message).
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="verifier-wheel-") as tmp:
        stage = Path(tmp) / "stage"
        stage.mkdir()
        (stage / "pyproject.toml").write_text(PYPROJECT, encoding="utf-8")
        for package in PACKAGES:
            for source in sorted((ROOT / package).rglob("*.py")):
                if "__pycache__" in source.parts:
                    continue
                target = stage / source.relative_to(ROOT)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(source.read_bytes())
        built = Path(tmp) / "dist"
        env = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH, "PYTHONHASHSEED": "0"}
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
             "--disable-pip-version-check", "--wheel-dir", str(built), str(stage)],
            capture_output=True, text=True, env=env, check=False)
        if proc.returncode != 0:
            raise ToolFailure(f"pip wheel failed building the verifier: {proc.stderr[-800:]}")
        wheel = built / WHEEL_NAME
        if not wheel.is_file():
            raise ToolFailure(f"pip wheel wrote {sorted(p.name for p in built.iterdir())}, "
                              f"not {WHEEL_NAME}")
        target = out_dir / WHEEL_NAME
        shutil.copyfile(wheel, target)
    return target


def release_wheel() -> bytes:
    """The committed wheel of this release (what the generator puts in every task's tests/).

    Raises BadInput naming the command that builds it when it is missing (the version was
    bumped and the wheel not rebuilt).
    """
    path = RELEASE_DIR / WHEEL_NAME
    if not path.is_file():
        raise BadInput(path, "the verifier wheel of this release is missing: build it with "
                             "`python -m tasks.generator.verifier_wheel`")
    return path.read_bytes()


def main(argv: list[str] | None = None) -> int:
    """Build the release wheel into tasks/verifier/ (or, with --check, compare); exit code."""
    parser = argparse.ArgumentParser(prog="python -m tasks.generator.verifier_wheel",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="build into a temp folder and exit 1 if it differs from the committed wheel")
    args = parser.parse_args(argv)
    if not args.check:
        for old in RELEASE_DIR.glob("alertforge_verifier-*.whl"):
            old.unlink()
        print(build(RELEASE_DIR))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        fresh = build(Path(tmp)).read_bytes()
    try:
        same = release_wheel() == fresh
    except BadInput as err:
        print(f"{err.path}: {err.problem}", file=sys.stderr)
        return 1
    print(f"{WHEEL_NAME}: " + ("matches a fresh build of this checkout" if same else
                              "differs from a fresh build of this checkout (the grader changed "
                              "since the release: bump the version and rebuild)"))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
