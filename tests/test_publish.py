"""Publishing: secrets redacted from every string, the Space dry run (file list, 10 MB refusal,
listing.json) and the CLI flags. No network: the upload itself is HfApi.upload_folder."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import fixture_tasks

from alertforge.cli import main
from exporter.export import export_site
from exporter.publish import LISTING, PublishRefused, publish_site
from exporter.redact import Redactor
from exporter.secret_formats import read_patterns

FIXTURE_RUNS = Path(__file__).parent / "fixtures" / "site" / "runs"
SECRETS = {
    "openai": "sk-proj-Abc123Def456Ghi789Jkl012",
    "huggingface": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "github": "ghp_1234567890abcdefghijABCDEFGHIJ123456",
    "bearer": "Bearer eyJhbGciOiJIUzI1NiJ9.payloadpart.signaturepart",
    "url_password": "https://deploy:hunter2secret@grafana.example.com/api",
    "slack": "https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXX",
    "discord": "https://discord.com/api/webhooks/123456/abcdefTOKEN",
    "generic_hook": "https://ci.example.org/api/hooks/9f8e7d6c5b4a3f2e",
    "email": "oncall.lead@payments.example.com",
}
LEAKS = ("Abc123Def456", "AbCdEfGhIjKl", "AKIAIOSFODNN7", "1234567890abcdefghij", "eyJhbGciOiJIUzI1NiJ9",
         "hunter2secret", "XXXXXXXXXXXXXXXX", "abcdefTOKEN", "9f8e7d6c5b4a3f2e", "oncall.lead@")


@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_kind_of_secret_is_masked(name):
    redactor = Redactor()
    masked = redactor.text(f"before {SECRETS[name]} after")
    assert masked.startswith("before ") and masked.endswith(" after")
    assert "[REDACTED" in masked
    assert not any(leak in masked for leak in LEAKS)
    assert redactor.masked == 1


def test_url_password_keeps_user_and_host_and_plain_text_is_untouched():
    redactor = Redactor()
    assert redactor.text(SECRETS["url_password"]) == (
        "https://deploy:[REDACTED:url-password]@grafana.example.com/api")
    assert redactor.text("rate(http_requests_total{code=~'5..'}[5m]) > 0.05") == (
        "rate(http_requests_total{code=~'5..'}[5m]) > 0.05")
    assert redactor.masked == 1


def test_custom_patterns_file_adds_regexes(tmp_path):
    patterns = tmp_path / "patterns.txt"
    patterns.write_text("# internal ticket tokens\nTKT-[0-9]{6}\n\n")
    redactor = Redactor.with_extra(patterns)
    assert redactor.text("see TKT-123456 now") == "see [REDACTED] now"
    patterns.write_text("([unclosed\n")
    with pytest.raises(Exception, match="line 1"):
        read_patterns(patterns)


def secret_runs(root: Path) -> Path:
    """The fixture runs with every kind of secret in tool arguments, outputs and a message."""
    shutil.copytree(FIXTURE_RUNS.parent, root / "site-fixture")
    runs = root / "site-fixture" / "runs"
    path = runs / "fixture-oracle-s1" / "trajectory.json"
    trajectory = json.loads(path.read_text())
    joined = "\n".join(SECRETS.values())
    trajectory["steps"][1]["observation"]["results"][0]["content"] += "\n" + joined
    trajectory["steps"][2]["tool_calls"][0]["arguments"]["path"] = "rules/a.yml"
    trajectory["steps"][2]["tool_calls"][0]["arguments"]["token"] = SECRETS["openai"]
    trajectory["steps"][0]["message"] = f"Page {SECRETS['email']} when done."
    path.write_text(json.dumps(trajectory))
    return runs


def all_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(folder.rglob("*")) if p.is_file())


@pytest.fixture(scope="module")
def runs_with_secrets(tmp_path_factory):
    return secret_runs(tmp_path_factory.mktemp("secrets"))


def test_export_redact_masks_every_secret_in_every_file(tmp_path, runs_with_secrets, capsys):
    assert main(["export", str(runs_with_secrets), "--out", str(tmp_path / "plain"), "--no-redact"]) == 0
    assert any(leak in all_text(tmp_path / "plain") for leak in LEAKS)
    assert main(["export", str(runs_with_secrets), "--out", str(tmp_path / "site")]) == 0
    printed = capsys.readouterr().out
    text = all_text(tmp_path / "site")
    assert [leak for leak in LEAKS if leak in text] == []
    assert "[REDACTED:openai-key]" in text and "[REDACTED:email]" in text
    masked = int(printed.split("redacted: ")[1].split()[0])
    assert masked >= 3
    run = json.loads((tmp_path / "site" / "data" / "runs" / "fixture-oracle-s1.json").read_bytes())
    assert run["steps"][2]["tool"]["arguments"]["path"] == "rules/a.yml"


def test_dry_run_lists_files_writes_nothing_and_uploads_nothing(tmp_path, runs_with_secrets, capsys, monkeypatch):
    from exporter import publish

    monkeypatch.setattr(publish, "upload", lambda *a: pytest.fail("a dry run must not upload"))
    site = tmp_path / "site"
    export_site([runs_with_secrets], site, task_index=fixture_tasks(), redactor=False)
    shutil.copy(Path(__file__).parents[1] / "space" / "README.md", site / "README.md")
    before = sorted((p.relative_to(site), p.stat().st_mtime_ns) for p in site.rglob("*"))
    assert main(["publish", "--space", "org/replay", "--site", str(site), "--dry-run"]) == 0
    printed = capsys.readouterr().out
    assert sorted((p.relative_to(site), p.stat().st_mtime_ns) for p in site.rglob("*")) == before
    assert not (site / LISTING).exists() and "nothing written" in printed
    manifest = publish.publish_site(site, "org/replay", dry_run=True, redactor=publish.Redactor(),
                                    out=lambda line: None)
    paths = [entry["path"] for entry in manifest["files"]]
    assert {"index.html", "run.html", "README.md", "data/index.json", "static/app.css"} <= set(paths)
    assert paths == sorted(paths) and LISTING not in paths
    assert manifest["space"] == "org/replay" and manifest["masked"] >= 3
    assert manifest["total_bytes"] == sum(entry["bytes"] for entry in manifest["files"])
    for entry in manifest["files"][:3]:
        assert f"{entry['bytes']:,d}  {entry['path']}" in printed
    assert "strings masked" in printed and "dry run" in printed
    assert "org/replay" in printed
    # the site on disk is left as exported; a new export into it still works (listing.json is allowed)
    assert any(leak in all_text(site / "data") for leak in LEAKS)
    export_site([runs_with_secrets], site, task_index=fixture_tasks(), redactor=False)


def test_staged_upload_holds_no_secret_and_no_search_token_of_one(tmp_path, runs_with_secrets, monkeypatch):
    from exporter import publish

    uploaded = {}

    def fake_upload(folder, space):
        uploaded["text"] = all_text(folder)
        uploaded["search"] = [json.loads(p.read_bytes()) for p in sorted((folder / "data" / "search").glob("*.json"))]
        uploaded["space"] = space

    monkeypatch.setattr(publish, "upload", fake_upload)
    site = tmp_path / "site"
    export_site([runs_with_secrets], site, task_index=fixture_tasks(), redactor=False)
    manifest = publish_site(site, "org/replay", redactor=Redactor(), out=lambda line: None)
    assert uploaded["space"] == "org/replay"
    assert [leak for leak in LEAKS if leak in uploaded["text"]] == []
    search_tokens = {token for shard in uploaded["search"] for token in shard["tokens"]}
    assert "hunter2secret" not in search_tokens and "abc123def456ghi789jkl012" not in search_tokens
    assert "write_file" in search_tokens
    assert manifest["masked"] > 0


def test_file_over_10_mb_is_refused_with_its_name(tmp_path, capsys, monkeypatch):
    from exporter import publish

    monkeypatch.setattr(publish, "upload", lambda *a: pytest.fail("must not upload"))
    site = tmp_path / "site"
    export_site([FIXTURE_RUNS], site, task_index=fixture_tasks())
    (site / "data" / "huge.bin").write_bytes(b"\0" * (10 * 1024 * 1024 + 1))
    assert main(["publish", "--space", "org/replay", "--site", str(site), "--dry-run"]) == 1
    assert "data/huge.bin" in capsys.readouterr().err
    assert not (site / LISTING).exists()
    with pytest.raises(PublishRefused, match="huge.bin"):
        publish_site(site, "org/replay", out=lambda line: None)


def test_a_file_name_that_is_not_utf8_is_refused_by_name_not_a_traceback(tmp_path, capsys):
    import os

    site = tmp_path / "site"
    export_site([FIXTURE_RUNS], site, task_index=fixture_tasks())
    with open(os.path.join(os.fsencode(site / "data"), b"n\xff.json"), "wb") as handle:
        handle.write(b"{}")
    assert main(["publish", "--space", "org/replay", "--site", str(site), "--dry-run"]) == 1
    err = capsys.readouterr().err
    assert "not UTF-8" in err and "Traceback" not in err
    assert not (site / LISTING).exists()


def test_bad_space_id_or_missing_site_is_bad_input(tmp_path, capsys):
    assert main(["publish", "--space", "no-slash", "--site", str(tmp_path), "--dry-run"]) == 2
    assert main(["publish", "--space", "org/name", "--site", str(tmp_path), "--dry-run"]) == 2
    assert "index.html missing" in capsys.readouterr().err


def test_real_upload_path_calls_hfapi_upload_folder(tmp_path, monkeypatch):
    import huggingface_hub

    calls = []

    class FakeApi:
        def upload_folder(self, **kwargs):
            calls.append(kwargs)
            assert (Path(kwargs["folder_path"]) / LISTING).is_file()
            return "ok"

    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    site = tmp_path / "site"
    export_site([FIXTURE_RUNS], site, task_index=fixture_tasks())
    publish_site(site, "org/replay", out=lambda line: None)
    assert len(calls) == 1
    assert calls[0]["repo_id"] == "org/replay" and calls[0]["repo_type"] == "space"


def test_space_readme_has_static_front_matter():
    text = (Path(__file__).parents[1] / "space" / "README.md").read_text()
    front = text.split("---")[1]
    assert "sdk: static" in front and "app_file: index.html" in front
