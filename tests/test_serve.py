"""exporter/serve.py answers as a static host does: revalidated caching (ETag, 304) and gzip."""

from __future__ import annotations

import gzip
import os
import urllib.error
import urllib.request

import pytest

from exporter.serve import serve_in_background


@pytest.fixture
def site(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "big.json").write_text('{"rows": [' + ",".join(['"row"'] * 2000) + "]}")
    (tmp_path / "tiny.txt").write_text("hi")
    server, url = serve_in_background(tmp_path)
    yield tmp_path, url
    server.shutdown()
    server.server_close()


def fetch(url: str, **headers: str):
    request = urllib.request.Request(url, headers=headers)
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


def test_json_is_gzipped_for_clients_that_accept_it_and_plain_for_others(site):
    folder, url = site
    raw = (folder / "data" / "big.json").read_bytes()
    status, headers, body = fetch(f"{url}data/big.json", **{"Accept-Encoding": "gzip, br"})
    assert status == 200 and headers["Content-Encoding"] == "gzip" and headers["Vary"] == "Accept-Encoding"
    assert gzip.decompress(body) == raw and len(body) < len(raw) / 10
    assert int(headers["Content-Length"]) == len(body)
    status, headers, body = fetch(f"{url}data/big.json")
    assert status == 200 and "Content-Encoding" not in headers and body == raw
    status, headers, body = fetch(f"{url}tiny.txt", **{"Accept-Encoding": "gzip"})
    assert body == b"hi" and "Content-Encoding" not in headers, "tiny files are not worth compressing"


def test_an_unchanged_file_is_revalidated_with_304_and_a_rewritten_one_is_sent_again(site):
    folder, url = site
    status, headers, _ = fetch(f"{url}data/big.json")
    assert headers["Cache-Control"] == "no-cache" and headers["ETag"].startswith('"')
    tag = headers["ETag"]
    status, headers, body = fetch(f"{url}data/big.json", **{"If-None-Match": tag})
    assert status == 304 and body == b""
    path = folder / "data" / "big.json"
    stat = path.stat()
    new = '{"rows": [' + ",".join(['"new"'] * 2000) + "]}"
    path.write_text(new)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))  # even within the same second
    status, headers, body = fetch(f"{url}data/big.json", **{"If-None-Match": tag})
    assert status == 200 and body == new.encode() and headers["ETag"] != tag
    gz_status, _, _ = fetch(f"{url}data/big.json", **{"Accept-Encoding": "gzip", "If-None-Match": headers["ETag"]})
    assert gz_status == 200, "the gzip form has its own tag"


def test_a_folders_index_page_is_compressed_like_any_file(site):
    folder, url = site
    (folder / "index.html").write_text("<!doctype html>" + "<p>run</p>" * 500)
    status, headers, body = fetch(url, **{"Accept-Encoding": "gzip"})
    assert status == 200 and headers["Content-Encoding"] == "gzip" and headers["ETag"]
    assert gzip.decompress(body) == (folder / "index.html").read_bytes()
    assert fetch(url, **{"If-None-Match": fetch(url)[1]["ETag"]})[0] == 304


def test_missing_files_and_folders_answer_as_before(site):
    _, url = site
    assert fetch(f"{url}data/nope.json")[0] == 404
    assert fetch(f"{url}data/")[0] == 200  # the folder listing, as http.server gives it
    assert fetch(f"{url}tiny.txt/")[0] == 404


def _start_cli(*args: str):
    import subprocess
    import sys

    return subprocess.Popen([sys.executable, "-m", "alertforge.cli", "serve", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_the_serve_command_serves_an_exported_site_as_a_static_host_does(tmp_path):
    """`alertforge serve SITE`: the URL first, then gzip and revalidation as the demo serves."""
    (tmp_path / "index.html").write_text("<!doctype html><title>x</title>" + "<p>row</p>" * 300)
    proc = _start_cli(str(tmp_path), "--port", "0")
    try:
        line = proc.stdout.readline()
        assert line.startswith(f"Serving {tmp_path} at http://127.0.0.1:"), line
        url = line.split(" at ", 1)[1].split(" ", 1)[0]
        status, headers, body = fetch(url, **{"Accept-Encoding": "gzip"})
        assert status == 200 and headers["Content-Encoding"] == "gzip"
        assert gzip.decompress(body) == (tmp_path / "index.html").read_bytes()
        again = fetch(url, **{"Accept-Encoding": "gzip", "If-None-Match": headers["ETag"]})
        assert again[0] == 304
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_serve_refuses_a_folder_that_is_no_site_and_a_port_that_is_taken(tmp_path, site):
    proc = _start_cli(str(tmp_path / "nothing-here"))
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "not an exported site (no index.html)" in err
    folder, url = site
    (folder / "index.html").write_text("<p>site</p>")
    taken = url.rsplit(":", 1)[1].strip("/")
    proc = _start_cli(str(folder), "--port", taken)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 2 and "the port is taken" in err, err
