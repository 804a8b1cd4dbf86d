"""detect-secrets' denylists kept in the export cache (exporter.secret_denylists): the same
patterns as read from the library, read back without importing it, and read from the library
again when the file is damaged or the library's files change."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from exporter import secret_denylists
from exporter.secret_denylists import CACHE_NAME, denylists, from_library
from exporter.secret_formats import detect_secrets_formats

ROOT = Path(__file__).resolve().parent.parent


def test_kept_denylists_are_the_librarys_and_are_read_back_without_it(tmp_path, monkeypatch):
    library = from_library()
    assert library and all(isinstance(flags, int) for _, _, flags in library)
    assert denylists(tmp_path) == library  # read from the library, then kept
    assert (tmp_path / CACHE_NAME).is_file()

    def refuse():
        raise AssertionError("read from the library although the kept file holds")

    monkeypatch.setattr(secret_denylists, "from_library", refuse)
    assert denylists(tmp_path) == library


@pytest.mark.parametrize("damage", ["not json", "{}", "emptied", "edited", "other key"])
def test_a_damaged_or_stale_file_is_read_from_the_library_again(tmp_path, damage):
    library = denylists(tmp_path)
    path = tmp_path / CACHE_NAME
    kept = orjson.loads(path.read_bytes())
    if damage == "not json":
        path.write_bytes(b"{not json")
    elif damage == "{}":
        path.write_bytes(b"{}")
    elif damage == "emptied":
        path.write_bytes(orjson.dumps({**kept, "patterns": [], "sha256": secret_denylists._digest([])}))
    elif damage == "edited":  # a pattern changed, its digest not: a weaker redaction must not be read
        kept["patterns"][0][1] = "never-matches"
        path.write_bytes(orjson.dumps(kept))
    else:  # the library's files changed since
        path.write_bytes(orjson.dumps({**kept, "key": "another"}))
    assert denylists(tmp_path) == library
    assert orjson.loads(path.read_bytes())["patterns"] == [list(item) for item in library]


def test_the_export_redactor_does_not_import_requests_once_the_denylists_are_kept(tmp_path):
    """The point of keeping them: detect-secrets' import pulls in requests (45 ms)."""
    code = ("import sys; from exporter.secret_formats import detect_secrets_formats; "
            "patterns = detect_secrets_formats(); print(len(patterns), 'requests' in sys.modules)")
    env = {"ALERTFORGE_EXPORT_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.split()
    again = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                           check=True).stdout.split()
    assert first[0] == again[0] and first[1] == "True" and again[1] == "False"


def test_detect_secrets_formats_are_as_made_from_the_library(tmp_path, monkeypatch):
    monkeypatch.setenv("ALERTFORGE_EXPORT_CACHE", str(tmp_path))
    for _ in range(2):  # made, then read back
        made = [(p.name, p.regex.pattern, p.regex.flags, p.group, p.needles) for p in detect_secrets_formats()]
        monkeypatch.setattr(secret_denylists, "denylists", lambda cache_root=None: from_library())
        direct = [(p.name, p.regex.pattern, p.regex.flags, p.group, p.needles) for p in detect_secrets_formats()]
        monkeypatch.undo()
        monkeypatch.setenv("ALERTFORGE_EXPORT_CACHE", str(tmp_path))
        assert made == direct and len(made) >= 18
