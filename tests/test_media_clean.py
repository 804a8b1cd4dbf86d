"""Media a site publishes (exporter/media_clean.py): images and audio from a run are re-encoded
with nothing but their pixels or samples, anything else is named and not published, and
publish uploads media only when told to and only as export wrote them.

The hostile files are built here: a PNG with text, ICC and private chunks and bytes after its
end, a JPEG with EXIF and a comment, an animated GIF, an HTML page and an SVG with a script
named as images, a decompression bomb's header, a WAV with a RIFF INFO list, a float WAV, MP3
bytes. The secret in them is a made-up GitHub token shape.
"""

from __future__ import annotations

import io
import json
import struct
import wave
import zlib
from pathlib import Path

import pytest
from PIL import Image, PngImagePlugin

from contract.files import read_json
from exporter.media_clean import (
    MAX_PIXELS,
    PNG_CHUNKS,
    MediaRefused,
    clean_media,
    media_problem,
)

SECRET = "ghp_" + "Q7wErTy8UiOp9AsDfGh0JkLzXcVbNm123456"


def png_chunks(data: bytes) -> list[bytes]:
    offset, kinds = 8, []
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        kinds.append(kind)
        offset += 12 + length
    return kinds


def chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def hostile_png() -> tuple[bytes, Image.Image]:
    image = Image.new("RGBA", (6, 4), (10, 20, 30, 200))
    image.putpixel((1, 2), (250, 0, 0, 255))
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", SECRET)
    info.add_text("Author", SECRET, zip=True)
    info.add_itxt("Description", SECRET)
    out = io.BytesIO()
    image.save(out, "PNG", pnginfo=info, icc_profile=SECRET.encode() * 4)
    data = out.getvalue()
    iend = data.rindex(b"IEND") - 4
    data = data[:iend] + chunk(b"prIv", SECRET.encode()) + data[iend:]  # a private chunk before IEND
    return data + b"<html>" + SECRET.encode(), image  # and a polyglot's tail


def wav_bytes(frames: bytes = b"\x10\x20\x30\x40", extra_chunk: bytes = b"") -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as target:
        target.setnchannels(1)
        target.setsampwidth(2)
        target.setframerate(8000)
        target.writeframes(frames)
    data = out.getvalue()
    if extra_chunk:
        data = data[:36] + extra_chunk + data[36:]
        data = data[:4] + struct.pack("<I", len(data) - 8) + data[8:]
    return data


def test_a_png_keeps_its_pixels_and_loses_every_text_icc_and_private_chunk_and_its_tail():
    data, original = hostile_png()
    assert SECRET.encode() in data and b"prIv" in data
    cleaned = clean_media(data, "image")
    assert cleaned.suffix == ".png" and cleaned.media_type == "image/png"
    assert SECRET.encode() not in cleaned.data
    assert set(png_chunks(cleaned.data)) <= set(PNG_CHUNKS)
    again = Image.open(io.BytesIO(cleaned.data))
    assert again.mode == "RGBA" and again.tobytes() == original.tobytes()
    assert media_problem(cleaned.data, ".png") is None


def test_a_jpeg_with_exif_and_a_comment_becomes_a_png_of_the_same_pixels():
    image = Image.new("RGB", (16, 8), (40, 90, 160))
    exif = Image.Exif()
    exif[0x010E] = SECRET  # ImageDescription
    out = io.BytesIO()
    image.save(out, "JPEG", exif=exif.tobytes(), comment=SECRET.encode())
    data = out.getvalue()
    assert data.count(SECRET.encode()) == 2
    cleaned = clean_media(data, "image")
    assert SECRET.encode() not in cleaned.data and cleaned.suffix == ".png"
    decoded = Image.open(io.BytesIO(data))
    assert Image.open(io.BytesIO(cleaned.data)).tobytes() == decoded.convert("RGB").tobytes()


def test_an_animated_gif_gives_its_first_frame_with_its_transparency_and_no_palette_or_comment():
    frames = [Image.new("P", (4, 4), colour) for colour in (1, 2)]
    frames[0].putpixel((0, 0), 0)  # the transparent index, used
    out = io.BytesIO()
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:], transparency=0,
                   comment=SECRET.encode(), duration=100, loop=0)
    cleaned = clean_media(out.getvalue(), "image")
    assert SECRET.encode() not in cleaned.data
    assert png_chunks(cleaned.data) == [b"IHDR", b"IDAT", b"IEND"] and media_problem(cleaned.data, ".png") is None
    first = Image.open(io.BytesIO(cleaned.data))
    assert first.mode == "RGBA" and first.getpixel((0, 0))[3] == 0 and first.getpixel((1, 1))[3] == 255


def test_unused_palette_and_transparency_entries_do_not_carry_text_through():
    palette = (b"\0\0\0" + SECRET.encode()).ljust(768, b"\0")
    image = Image.new("P", (8, 8), 0)
    image.putpalette(palette)
    out = io.BytesIO()
    image.save(out, "PNG", transparency=SECRET.encode()[:200])
    assert SECRET.encode() in out.getvalue()
    cleaned = clean_media(out.getvalue(), "image")
    assert SECRET.encode() not in cleaned.data and png_chunks(cleaned.data) == [b"IHDR", b"IDAT", b"IEND"]


def test_a_progressive_jpeg_of_thousands_of_scans_is_refused_before_decoding():
    image = Image.new("L", (64, 64), 128)
    out = io.BytesIO()
    image.save(out, "JPEG", progressive=True)
    data = out.getvalue()
    scan = data[data.rindex(b"\xff\xda"):data.rindex(b"\xff\xd9")]
    bomb = data[:-2] + scan * 600 + data[-2:]
    with pytest.raises(MediaRefused, match="scan limit"):
        clean_media(bomb, "image")
    assert clean_media(data, "image").suffix == ".png"  # a normal progressive JPEG passes


@pytest.mark.parametrize("data", [
    b"<!doctype html><script>fetch('/steal?'+document.cookie)</script>",
    b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>',
    b"\x89PNG\r\n\x1a\n" + b"\x00" * 40,
    b"",
])
def test_bytes_that_are_not_a_readable_image_are_refused_with_a_reason(data):
    with pytest.raises(MediaRefused, match="image"):
        clean_media(data, "image")


def test_a_decompression_bomb_is_refused_from_its_header_before_decoding():
    side = int(MAX_PIXELS ** 0.5) + 10
    header = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    bomb = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"\x00" * 64)) \
        + chunk(b"IEND", b"")
    with pytest.raises(MediaRefused, match="pixel limit"):
        clean_media(bomb, "image")


def test_a_wav_keeps_its_samples_and_loses_its_info_list():
    info = b"INFO" + b"ICMT" + struct.pack("<I", len(SECRET)) + SECRET.encode()
    data = wav_bytes(extra_chunk=b"LIST" + struct.pack("<I", len(info)) + info)
    assert SECRET.encode() in data
    assert "chunk other than" in media_problem(data, ".wav")
    cleaned = clean_media(data, "audio")
    assert cleaned.suffix == ".wav" and cleaned.media_type == "audio/wav"
    assert SECRET.encode() not in cleaned.data and media_problem(cleaned.data, ".wav") is None
    with wave.open(io.BytesIO(cleaned.data)) as again:
        assert (again.getnchannels(), again.getsampwidth(), again.getframerate()) == (1, 2, 8000)
        assert again.readframes(again.getnframes()) == b"\x10\x20\x30\x40"


def wav_header(tag=1, channels=1, rate=8000, bits=16, data=b"\x00\x00") -> bytes:
    """A WAV file written by hand, any field as given (the standard library's writer refuses
    the odd ones)."""
    align = channels * bits // 8
    fmt = struct.pack("<HHIIHH", tag, channels, rate, (rate * align) % 2**32, align % 2**16, bits)
    body = b"WAVE" + b"fmt " + struct.pack("<I", 16) + fmt + b"data" + struct.pack("<I", len(data)) + data
    return b"RIFF" + struct.pack("<I", len(body)) + body


@pytest.mark.parametrize("data", [
    wav_header(bits=40, data=b"\0" * 10),  # the reader takes 5-byte samples, the writer does not
    wav_header(rate=0, data=b"\0" * 4),
    wav_header(channels=65535, data=b"\0" * 4),
    wav_header(rate=0xFFFFFFFF, data=b"\0" * 4),
    wav_header()[:16] + struct.pack("<I", 0x1000) + wav_header()[20:],  # fmt chunk past the end
    wav_header(channels=0, bits=0, data=SECRET.encode()),
])
def test_a_wav_with_a_header_no_writer_takes_is_refused_not_a_crash(data):
    with pytest.raises(MediaRefused):
        clean_media(data, "audio")
    assert media_problem(data, ".wav") is not None


@pytest.mark.parametrize("data", [
    wav_bytes()[:20] + struct.pack("<H", 3) + wav_bytes()[22:],  # IEEE float: not PCM
    b"ID3\x04\x00\x00\x00\x00\x00\x00" + b"\xff\xfb\x90\x00" * 8,  # an MP3's tag and frames
    b"<html>" + SECRET.encode(),
])
def test_audio_other_than_pcm_wav_is_refused(data):
    with pytest.raises(MediaRefused, match="WAV"):
        clean_media(data, "audio")


def test_media_problem_names_tails_foreign_chunks_and_other_kinds():
    cleaned = clean_media(hostile_png()[0], "image").data
    assert "after its end" in media_problem(cleaned + b"x", ".png")
    with_text = cleaned[:33] + chunk(b"tEXt", b"k\x00" + SECRET.encode()) + cleaned[33:]
    assert "'tEXt' chunk" in media_problem(with_text, ".png")
    assert "not a PNG" in media_problem(b"GIF89a", ".png")
    assert "not a kind of media" in media_problem(cleaned, ".svg")
    wav = clean_media(wav_bytes(), "audio").data
    assert media_problem(wav + b"tail", ".wav") is not None


# --- through the importer, export, the viewer, the single file and publish -----------------


def media_run(tmp_path: Path) -> Path:
    """An imported run (Harbor importer, one ATIF file) whose media/ folder holds a hostile PNG,
    an HTML page and an SVG named as images and a WAV with an INFO list, its step's parts naming
    them and a file that is not there (as the importer writes parts it copied from a trial
    folder; a lone ATIF file has none to copy); returns the run folder."""
    from recorder.importers.harbor.importer import import_harbor

    def part(kind, path, media_type):
        return {"type": kind, "source": {"media_type": media_type, "path": path}}
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
           "steps": [{"step_id": 1, "source": "user", "message": [
               {"type": "text", "text": "look"}, part("image", "media/001-shot.png", "image/png"),
               part("image", "media/002-page.png", "image/png"),
               part("image", "media/003-logo.svg", "image/png"),  # ATIF allows no SVG type: the name lies
               part("audio", "media/004-note.wav", "audio/wav"), part("image", "media/gone.png", "image/png")]}]}
    (tmp_path / "t.trajectory.json").write_text(json.dumps(doc))
    summary = import_harbor([tmp_path / "t.trajectory.json"], tmp_path / "runs")
    run = tmp_path / "runs" / summary["imported"][0]["run_id"]
    (run / "media").mkdir()
    (run / "media" / "001-shot.png").write_bytes(hostile_png()[0])
    (run / "media" / "002-page.png").write_bytes(b"<!doctype html><script>alert(1)</script>")
    (run / "media" / "003-logo.svg").write_bytes(b'<svg xmlns="http://www.w3.org/2000/svg">'
                                                 b"<script>alert(1)</script></svg>")
    info = b"INFO" + b"ICMT" + struct.pack("<I", len(SECRET)) + SECRET.encode()
    (run / "media" / "004-note.wav").write_bytes(wav_bytes(extra_chunk=b"LIST" + struct.pack("<I", len(info)) + info))
    trajectory = read_json(run / "trajectory.json")  # as the importer writes parts it copied
    trajectory["steps"][0]["message"] = doc["steps"][0]["message"]
    (run / "trajectory.json").write_text(json.dumps(trajectory))
    return run


def site_bytes(site: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(site.rglob("*")) if path.is_file())


def test_export_publishes_only_clean_media_and_names_each_refused_part(tmp_path):
    from exporter.export import export_site

    runs = media_run(tmp_path)
    export_site([runs], tmp_path / "site")
    site = tmp_path / "site"
    media = sorted(p.relative_to(site).as_posix() for p in (site / "data" / "media").rglob("*") if p.is_file())
    assert [Path(m).name for m in media] == ["001-shot.png", "004-note.wav"]
    for rel in media:
        assert media_problem((site / rel).read_bytes(), Path(rel).suffix) is None
    assert SECRET.encode() not in site_bytes(site)
    run = read_json(next((site / "data" / "runs").glob("*.json")))
    parts = {Path(p["path"]).name: p for s in run["steps"] for p in s.get("media", [])}
    assert parts["001-shot.png"]["url"].endswith("/001-shot.png") and "problem" not in parts["001-shot.png"]
    assert parts["004-note.wav"]["url"].endswith("/004-note.wav")
    assert parts["002-page.png"]["url"] is None
    assert "not a PNG, JPEG, GIF or WebP image" in parts["002-page.png"]["problem"]
    assert parts["003-logo.svg"]["url"] is None and "not published" in parts["003-logo.svg"]["problem"]
    assert parts["gone.png"]["url"] is None and "problem" not in parts["gone.png"]

    export_site([runs], tmp_path / "bare", with_media=False)
    assert not (tmp_path / "bare" / "data" / "media").exists()
    run = read_json(next((tmp_path / "bare" / "data" / "runs").glob("*.json")))
    problems = [p.get("problem") for s in run["steps"] for p in s.get("media", [])]
    assert problems[:4] == ["not exported (the site was exported with --no-media)"] * 4


def test_samples_spelling_a_token_and_names_differing_in_case_are_handled_at_export(tmp_path):
    from exporter.export import export_site

    run = media_run(tmp_path)
    (run / "media" / "006-tone.wav").write_bytes(wav_header(bits=8, data=b"\x80" * 20 + SECRET.encode() + b"\x80"))
    (run / "media" / "Pic.png").write_bytes(hostile_png()[0])
    blue = io.BytesIO()
    Image.new("RGB", (3, 3), (0, 0, 255)).save(blue, "PNG")
    (run / "media" / "pic.png").write_bytes(blue.getvalue())
    trajectory = read_json(run / "trajectory.json")
    trajectory["steps"][0]["message"] += [
        {"type": "audio", "source": {"media_type": "audio/wav", "path": "media/006-tone.wav"}},
        {"type": "image", "source": {"media_type": "image/png", "path": "media/Pic.png"}},
        {"type": "image", "source": {"media_type": "image/png", "path": "media/pic.png"}}]
    (run / "trajectory.json").write_text(json.dumps(trajectory))
    export_site([run], tmp_path / "site")
    site = tmp_path / "site"
    assert SECRET.encode() not in site_bytes(site)
    parts = {Path(p["path"]).name: p for s in read_json(next((site / "data" / "runs").glob("*.json")))["steps"]
             for p in s.get("media", [])}
    assert parts["006-tone.wav"]["url"] is None
    assert "spell what looks like a secret (github-token)" in parts["006-tone.wav"]["problem"]
    urls = {parts["Pic.png"]["url"], parts["pic.png"]["url"]}
    assert len({url.lower() for url in urls}) == 2, urls  # two files even on a case-blind disk


def test_publish_takes_media_only_when_told_and_only_as_export_wrote_them(tmp_path):
    from exporter.export import export_site
    from exporter.publish import PublishRefused, publish_site
    from exporter.redact import Redactor

    export_site([media_run(tmp_path)], tmp_path / "site")
    site = tmp_path / "site"
    with pytest.raises(PublishRefused, match="--with-media") as refused:
        publish_site(site, "org/replay", dry_run=True, redactor=Redactor(), out=lambda line: None)
    assert "data/media/" in str(refused.value)
    manifest = publish_site(site, "org/replay", dry_run=True, redactor=Redactor(), out=lambda line: None,
                            with_media=True)
    assert sum(entry["path"].startswith("data/media/") for entry in manifest["files"]) == 2

    shot = next((site / "data" / "media").rglob("001-shot.png"))
    clean = shot.read_bytes()
    shot.write_bytes(clean[:33] + chunk(b"tEXt", b"k\x00" + SECRET.encode()) + clean[33:])
    for redactor in (Redactor(), None):  # the structure is checked redacting or not
        with pytest.raises(PublishRefused, match="'tEXt' chunk") as refused:
            publish_site(site, "org/replay", dry_run=True, redactor=redactor, out=lambda line: None,
                         with_media=True)
        assert "001-shot.png" in str(refused.value)
    shot.write_bytes(clean)

    def refused(name, data, match, redactor=None):
        (shot.parent / name).write_bytes(data)
        with pytest.raises(PublishRefused, match=match) as error:
            publish_site(site, "org/replay", dry_run=True, redactor=redactor, out=lambda line: None,
                         with_media=True)
        assert name in str(error.value)
        (shot.parent / name).unlink()

    refused("evil.svg", b"<svg><script>alert(1)</script></svg>", "not a kind of media")
    # chunk names only IHDR, IDAT, IEND but made by hand (bad CRCs, a script in IDAT): not a fixed point
    raw = lambda kind, body: struct.pack(">I", len(body)) + kind + body + b"\0\0\0\0"
    forged = (b"\x89PNG\r\n\x1a\n" + raw(b"IHDR", b"x") + raw(b"IDAT", b"<script>alert(1)</script>")
              + raw(b"IEND", b""))
    assert media_problem(forged, ".png") is None
    refused("added.png", forged, "not media the export would publish|not as the export writes it")
    blue = io.BytesIO()
    Image.new("RGB", (2, 2), (0, 0, 255)).save(blue, "PNG", compress_level=1)  # other zlib level
    refused("recompressed.png", blue.getvalue(), "not as the export writes it")
    tone = wav_header(bits=8, data=b"\x80" * 8 + SECRET.encode())  # a fixed point, but it spells a token
    assert clean_media(tone, "audio").data == tone
    refused("tone.wav", tone, "looks like a secret", Redactor())


@pytest.mark.browser
def test_viewer_shows_clean_media_names_refused_parts_and_the_single_file_inlines_them(tmp_path, page):
    from exporter.export import export_site
    from exporter.serve import serve_in_background
    from exporter.single_file import export_single_file

    runs = media_run(tmp_path)
    export_site([runs], tmp_path / "site")
    run_id = read_json(next((tmp_path / "site" / "data" / "runs").glob("*.json")))["run_id"]
    server, url = serve_in_background(tmp_path / "site", port=0, host="127.0.0.1")
    try:
        page.goto(f"{url}run.html?run={run_id}&step=1")
        page.wait_for_selector("body[data-ready='1']")
        _assert_media_shown(page)
    finally:
        server.shutdown()
        server.server_close()
    export_single_file([runs], tmp_path / "one.html")
    page.goto((tmp_path / "one.html").as_uri() + f"?page=run&run={run_id}&step=1")
    page.wait_for_selector("body[data-ready='1']")
    _assert_media_shown(page)
    assert page.evaluate("document.querySelector('#step-media img').src").startswith("data:image/png;base64,")
    assert page.page_errors == []


def _assert_media_shown(page) -> None:
    page.locator("#step-media img").scroll_into_view_if_needed()
    page.wait_for_function("document.querySelector('#step-media img').complete")
    assert page.evaluate("document.querySelector('#step-media img').naturalWidth") == 6
    assert page.locator("#step-media audio").count() == 1
    text = page.locator("#step-media").inner_text()
    assert "002-page.png: not published: not a PNG, JPEG, GIF or WebP image" in text
    assert "003-logo.svg: not published" in text
    assert "gone.png: the file is not in the job folder" in text
