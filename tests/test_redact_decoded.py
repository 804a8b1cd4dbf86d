"""Secrets in encoded forms are found and masked (base64, URL-safe base64, hex, URL encoding,
a token split by a shell continuation), the report says where; their look-alikes are left
alone (digests, encoded plain text, encoded paths, continued commands, the destination
causes of a routing check); a private key's block ends where the key does, so the output
after it (or after a cut key) stays. No secret below is real: each is built from a pattern."""

from __future__ import annotations

import base64
from urllib.parse import quote

import pytest

from exporter.redact import Redactor

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
AWS = "AKIA" + "QWERTYUIOPASDFGH"

HIDDEN = [
    ("base64", "config: " + base64.b64encode(f"token={TOKEN}".encode()).decode()),
    ("base64", "echo " + base64.urlsafe_b64encode(f"{{\"k\": \"{AWS}\"}}".encode()).decode().rstrip("=") + " | base64 -d"),
    ("base64", "blob " + base64.b64encode(base64.b64encode(TOKEN.encode())).decode()),
    ("hex", "payload " + f"aws={AWS}".encode().hex()),
    ("url-encoded", "GET /hook?next=" + quote(f"https://x/?token={TOKEN}", safe="") + " 200"),
    ("joined lines", f"gh auth login --with {TOKEN[:20]}\\\n    {TOKEN[20:]} && gh repo list"),
]


@pytest.mark.parametrize("encoding,text", HIDDEN, ids=[f"{e}-{i}" for i, (e, _) in enumerate(HIDDEN)])
def test_a_secret_in_an_encoded_form_is_masked_and_reported(encoding, text):
    redactor = Redactor()
    masked = redactor.text(text)
    for part in (TOKEN, AWS, TOKEN[:20], TOKEN[20:]):
        assert part not in masked, masked
    assert f" in {encoding}]" in masked, masked
    assert f" in {encoding}" in redactor.report()
    assert masked.split()[0] == text.split()[0]  # the text around the block is kept


LOOK_ALIKES = [
    "sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 2f1e3c4d5b6a79880716253443526170f9e8d7c6",
    "image: " + base64.b64encode(b"this is only a plain sentence, nothing to hide").decode(),
    "path rules/with%20space/team%2Falerts.yml",
    "amtool config routes test \\\n  --config.file=alertmanager.yml severity=page",
    ("receiver core-services-pager sends elsewhere than the spec: expected webhook send_resolved=true "
     "url=http://pager.example.internal/v1/teams/core-services; got webhook url=http://pager.example.internal/v1/teams/payments"),
    "run id af-001-slo-onboarding-easy-s1__oracle__s0__83231af8d0",
    "TXlTZWNyZXRQYXNzd29yZA is a word that is base64 of nothing secret-shaped",
]


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_look_alikes_of_encoded_secrets_are_left_alone(text):
    redactor = Redactor()
    assert redactor.text(text) == text
    assert redactor.masked == 0


def test_a_private_key_block_ends_where_the_key_does():
    redactor = Redactor()
    body = "MIIEpAIBAAKCAQEA" + "x" * 48
    whole = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n$ ls\nalerts.yml rules.yml"
    assert redactor.text(whole) == "[REDACTED:private-key]\n$ ls\nalerts.yml rules.yml"
    cut = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n{body}\n[output truncated]\nnext: ok"
    assert redactor.text(cut) == "[REDACTED:private-key]\n[output truncated]\nnext: ok"
    pgp = "-----BEGIN PGP PRIVATE KEY BLOCK-----\nxyz\n-----END PGP PRIVATE KEY BLOCK-----\nafter"
    assert redactor.text(pgp) == "[REDACTED:private-key]\nafter"
    flat = f"key: -----BEGIN EC PRIVATE KEY----- {body} -----END EC PRIVATE KEY----- done"
    assert redactor.text(flat).endswith(" done") and body not in redactor.text(flat)


def _png(mode: str, pixels: list) -> bytes:
    import io

    from PIL import Image

    image = Image.new(mode, (len(pixels), 1))
    image.putdata(pixels)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_a_token_written_into_pixel_values_is_found_in_the_pixel_rows():
    """A grayscale image whose one row of pixel values spells a token, and a colour image whose
    red channel does: the scan reads the decoded rows and each channel (the compressed file
    shows neither); an ordinary gradient is published."""
    from exporter.media_clean import clean_media

    redactor = Redactor()
    gray = clean_media(_png("L", [ord(c) for c in TOKEN]), "image")
    red = clean_media(_png("RGB", [(ord(c), 7, 200) for c in TOKEN]), "image")
    plain = clean_media(_png("RGB", [(i, i, i) for i in range(200)]), "image")
    for cleaned in (gray, red):
        assert TOKEN not in cleaned.data.decode("latin-1")
        assert any("github-token" in redactor.kinds_in(text) for text in cleaned.payload_texts())
    assert not any(redactor.kinds_in(text) for text in plain.payload_texts())


def test_a_field_whose_value_starts_with_an_auth_scheme_masks_the_credentials_after_it():
    redactor = Redactor()
    assert redactor.text("token: Bearer eyJhbGciOi.payload.sig then") == "token: [REDACTED:token-field] then"
    assert redactor.text("password: Basic dXNlcjpwYXNz x") == "password: [REDACTED:password-field] x"
