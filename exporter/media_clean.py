"""Media a site publishes: the images and audio a run's agent saw, re-encoded with nothing else.

A run's media files (ATIF v1.6 / v1.8 ``image`` and ``audio`` content parts, copied into the
run folder by the Harbor importer) are untrusted bytes under an untrusted name. Published as
they came, three kinds of fault reach a Space:

- the bytes are not what the name says: an HTML page or an SVG with a script named
  ``shot.html`` or ``shot.svg`` is served by a static host as a page of the Space's own origin;
- metadata the secret scan never reads carries text: PNG ``tEXt``/``zTXt``/``iTXt`` and private
  chunks, EXIF, ICC profile descriptions, JPEG comments, RIFF ``LIST``/``INFO`` tags, bytes after
  the image's end (a polyglot);
- a decompression bomb: a few kilobytes that decode to gigabytes.

So a media file is published only as :func:`clean_media` writes it again: an image (PNG, JPEG,
GIF or WebP, at most :data:`MAX_PIXELS` and, for a progressive JPEG, :data:`MAX_JPEG_SCANS`
scans; its first frame) decoded by Pillow and encoded as a PNG of its pixels alone, in a mode
with no palette (a palette and a transparency table hold entries no pixel has to use, so text
would ride along unseen: palette and colour-keyed images become RGB or RGBA); a PCM WAV read
by the standard library's ``wave`` and written again with only its format and samples.
Anything else is refused with the reason, which the viewer shows in place of the part.
:func:`media_problem` is the structural check of a published file: only the chunks these two
encoders write, nothing after the end; publish also requires each file to be what
:func:`clean_media` makes of it (a fixed point), so nothing hand-made passes.

Pixels and sound themselves can hold a secret. The bytes of the decoded pixel rows (all
channels, then each channel alone) and a WAV's frames are scanned for secrets of known formats
(``CleanMedia.payload``: a token written into the pixel values); text drawn as glyphs (a
screenshot of a terminal) needs OCR, which no scan here does, so publish uploads a site with
media only when told to (``--with-media``).

PNG chunk layout: ISO/IEC 15948 (PNG, 2nd edition) section 5; WAV: the RIFF WAVE format
(Microsoft Multimedia Programming Interface and Data Specifications 1.0), PCM ``fmt `` chunk of
16 bytes.
"""

from __future__ import annotations

import io
import struct
import warnings
import wave
from dataclasses import dataclass

MAX_PIXELS = 40_000_000
"""Largest image decoded (width x height; a 4K screenshot is 8.3 million)."""
MEDIA_CAP = 8 * 1024 * 1024
"""Largest media file published, after re-encoding (bytes)."""
MEDIA_FOLDER = "data/media/"
"""Where a site's media files are: ``data/media/<run-id>/<name>`` (exporter.atif_view writes
them, exporter.single_file inlines them, exporter.publish checks them)."""
MEDIA_SUFFIXES = {".png": "image/png", ".wav": "audio/wav"}
"""What a published media file is: its suffix and the type a static host serves it as."""
IMAGE_FORMATS = ("PNG", "JPEG", "GIF", "WEBP")
"""Image formats read (Pillow's names)."""
PNG_MODES = ("1", "L", "LA", "RGB", "RGBA", "I;16")
"""Pillow modes written as PNG as they are (none has a palette); any other is converted to RGB
or RGBA first, as is an image with a transparency colour key."""
MAX_JPEG_SCANS = 64
"""Most scans a JPEG may have (a progressive one has about ten): each is a decoding pass over
the whole image, so thousands of tiny repeated scans make a CPU bomb the pixel cap misses."""
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_CHUNKS = (b"IHDR", b"IDAT", b"IEND")
"""The PNG chunks :func:`clean_media` writes (Pillow's PNG encoder with no info): nothing else
is allowed in a published PNG."""


class MediaRefused(ValueError):
    """A media file the site does not publish; ``problem`` says why, for the viewer."""

    def __init__(self, problem: str):
        super().__init__(problem)
        self.problem = problem


@dataclass(frozen=True)
class CleanMedia:
    """A media file as published: ``data`` (bytes), ``suffix`` (``.png`` or ``.wav``) and
    ``media_type`` (``image/png`` or ``audio/wav``)."""

    data: bytes
    suffix: str
    media_type: str
    payload: tuple[bytes, ...] = ()
    """What the file shows or plays, as bytes a text scan can read: an image's pixel rows
    (all channels interleaved, then each channel alone), a WAV's frames."""

    def payload_texts(self) -> list[str]:
        """:attr:`payload` as latin-1 texts (one character a byte) for the secret scan."""
        return [part.decode("latin-1") for part in self.payload]


def _clean_image(data: bytes) -> tuple[bytes, tuple[bytes, ...]]:
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=IMAGE_FORMATS)
            if image.width * image.height > MAX_PIXELS:
                raise MediaRefused(f"an image of {image.width} x {image.height} pixels, over the "
                                   f"{MAX_PIXELS:,d}-pixel limit")
            scans = data.count(b"\xff\xda")  # SOS; 0xFF inside scan data is stuffed with 0x00
            if image.format == "JPEG" and scans > MAX_JPEG_SCANS:
                raise MediaRefused(f"a JPEG of {scans:,d} scans, over the {MAX_JPEG_SCANS}-scan limit")
            image.seek(0)
            image.load()
    except MediaRefused:
        raise
    except UnidentifiedImageError:
        raise MediaRefused("not a PNG, JPEG, GIF or WebP image") from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise MediaRefused(f"an image over the {MAX_PIXELS:,d}-pixel limit") from None
    except (OSError, ValueError, SyntaxError, struct.error, EOFError, RuntimeError) as error:
        raise MediaRefused(f"an image that does not decode ({error})") from None
    if image.mode not in PNG_MODES or "transparency" in image.info:
        try:
            image = image.convert("RGBA" if image.has_transparency_data else "RGB")
        except (OSError, ValueError) as error:
            raise MediaRefused(f"an image whose colours cannot be read ({error})") from None
    image.info = {}  # Pillow writes an icc_profile, exif or transparency it finds there
    out = io.BytesIO()
    try:
        image.save(out, "PNG", optimize=False)
    except (OSError, ValueError) as error:
        raise MediaRefused(f"an image that cannot be written as a PNG ({error})") from None
    bands = image.getbands()
    rows = (image.tobytes(), *(image.getchannel(b).tobytes() for b in bands if len(bands) > 1))
    return out.getvalue(), rows


def _clean_wav(data: bytes) -> tuple[bytes, tuple[bytes, ...]]:
    try:
        with wave.open(io.BytesIO(data), "rb") as source:
            params = source.getparams()
            frames = source.readframes(params.nframes)
    except (wave.Error, EOFError, struct.error, RuntimeError, ValueError, OverflowError) as error:
        raise MediaRefused(f"not a PCM WAV file ({error}); other audio is not published") from None
    if not (1 <= params.nchannels <= 16 and 1 <= params.sampwidth <= 4 and 1 <= params.framerate <= 768_000):
        raise MediaRefused(f"a WAV file of {params.nchannels} channels, {params.sampwidth}-byte samples "
                           f"at {params.framerate} Hz, which is not audio this site publishes")
    if len(frames) != params.nframes * params.nchannels * params.sampwidth:
        raise MediaRefused("a WAV file shorter than its header says")
    out = io.BytesIO()
    try:
        with wave.open(out, "wb") as target:
            target.setnchannels(params.nchannels)
            target.setsampwidth(params.sampwidth)
            target.setframerate(params.framerate)
            target.writeframes(frames)
    except (wave.Error, struct.error, ValueError, OverflowError) as error:
        raise MediaRefused(f"a WAV file that cannot be written again ({error})") from None
    return out.getvalue(), (frames,)


def _made(made: tuple[bytes, tuple[bytes, ...]], suffix: str) -> tuple[bytes, str, str, tuple[bytes, ...]]:
    return made[0], suffix, MEDIA_SUFFIXES[suffix], made[1]


def clean_media(data: bytes, part_type: str) -> CleanMedia:
    """``data`` (a run's media file, untrusted) as the site publishes it, for a part of type
    ``part_type`` (``image`` or ``audio``): see the module's docstring.

    Raises MediaRefused (with the viewer's reason) for any other type, bytes that are not a
    readable image or PCM WAV, an image over MAX_PIXELS, or a result over MEDIA_CAP bytes.
    """
    if part_type == "image":
        cleaned = CleanMedia(*_made(_clean_image(data), ".png"))
    elif part_type == "audio":
        cleaned = CleanMedia(*_made(_clean_wav(data), ".wav"))
    else:
        raise MediaRefused(f"a {part_type!r} part; only image and audio parts are published")
    if len(cleaned.data) > MEDIA_CAP:
        raise MediaRefused(f"{len(cleaned.data):,d} bytes once re-encoded, over the "
                           f"{MEDIA_CAP:,d}-byte limit")
    problem = media_problem(cleaned.data, cleaned.suffix)
    if problem:  # the encoders write nothing else; a library change that did is caught here
        raise MediaRefused(f"re-encoded, it still {problem}")
    return cleaned


def _png_problem(data: bytes) -> str | None:
    if not data.startswith(PNG_SIGNATURE):
        return "is not a PNG"
    offset, seen = len(PNG_SIGNATURE), []
    while offset < len(data):
        if offset + 12 > len(data):
            return "has a cut-off chunk"
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind not in PNG_CHUNKS:
            return f"holds a {kind.decode('latin-1')!r} chunk (only {', '.join(c.decode() for c in PNG_CHUNKS)} are published)"
        seen.append(kind)
        offset += 12 + length
        if kind == b"IEND":
            break
    if not seen or seen[0] != b"IHDR" or seen[-1] != b"IEND":
        return "does not start with IHDR and end with IEND"
    if offset != len(data):
        return f"has {len(data) - offset:,d} bytes after its end"
    return None


def _wav_problem(data: bytes) -> str | None:
    if len(data) < 44 or data[:4] != b"RIFF" or data[8:16] != b"WAVEfmt ":
        return "is not a WAV file"
    riff_size, fmt_size = struct.unpack("<I", data[4:8])[0], struct.unpack("<I", data[16:20])[0]
    if fmt_size != 16 or struct.unpack("<H", data[20:22])[0] != 1:
        return "is not a PCM WAV file with a 16-byte format chunk"
    channels, rate, _, _, bits = struct.unpack("<HIIHH", data[22:36])
    if not (1 <= channels <= 16 and bits in (8, 16, 24, 32) and 1 <= rate <= 768_000):
        return f"declares {channels} channels of {bits}-bit samples at {rate} Hz"
    if data[36:40] != b"data":
        return "holds a chunk other than 'fmt ' and 'data'"
    size = struct.unpack("<I", data[40:44])[0]
    if riff_size != 36 + size or len(data) not in (44 + size, 44 + size + (size & 1)):
        return "has bytes its chunks do not account for"
    return None


def published_problem(data: bytes, suffix: str) -> str | None:
    """What is wrong with ``data`` as a media file of a site to publish: :func:`media_problem`,
    then whether it is exactly what :func:`clean_media` makes of it (so a file added or edited
    after the export, whatever its chunks hold, is refused); None when it is."""
    problem = media_problem(data, suffix)
    if problem:
        return problem
    try:
        again = clean_media(data, "image" if suffix == ".png" else "audio").data
    except MediaRefused as refused:
        return f"is not media the export would publish ({refused.problem})"
    if again != data:
        return "is not as the export writes it (written again, its bytes differ)"
    return None


def media_problem(data: bytes, suffix: str) -> str | None:
    """What is wrong with ``data`` as a published media file named ``*suffix``: None when it
    holds only what :func:`clean_media` writes (the PNG chunks PNG_CHUNKS in order, or a PCM
    WAV's ``fmt `` and ``data`` chunks), nothing after its end; else the problem, as a phrase
    ("holds a 'tEXt' chunk ...") that follows the file's name."""
    if suffix == ".png":
        return _png_problem(data)
    if suffix == ".wav":
        return _wav_problem(data)
    return f"is not a kind of media file a site publishes ({', '.join(MEDIA_SUFFIXES)})"
