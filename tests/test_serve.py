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
