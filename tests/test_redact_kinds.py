"""The redactor's remaining faults by kind (issue 33 item 2), each over its generated variants
(tests/redact_hostile.py): wrapped encodings are joined and masked whole, altered and cut
private key blocks are masked without the output after them, every pattern reads a bounded
window and the scans around them do linear work, and look-alikes stay readable.

The bulk of the variants runs with the sweeps (``bash scripts/test-sweeps.sh``); one sample of
each kind runs in the suite.
"""

from __future__ import annotations

import re
import re._constants as sre_constants
import re._parser as sre_parser

import pytest
from redact_hostile import (
    KEY_LINES,
    LOOK_ALIKES,
    PATHOLOGICAL,
    RECEIVER_PLACES,
    RECEIVERS,
    key_inputs,
    wrapped_inputs,
)

from exporter import redact, secret_decoded, secret_fields
from exporter.redact import Redactor

WRAPPED = wrapped_inputs()
KEYS = key_inputs()
IN_SUITE = {"github-base64-mime-76", "aws-hex-json-concat", "slack-base64url-backslash",
            "field-base64-yaml-folded", "stripe-base64-python-implicit", "github-hex-indented",
            "rsa-escaped-json-cut", "rsa-blank-line-cut", "ec-proc-type-cut", "private-cat-n-cut",
            "openssh-lowercase-whole", "pgp-odd-case-cut", "encrypted-escaped-twice-whole", "rsa-flat-cut"}


def _params(cases):
    return [pytest.param(text, secrets, kept, id=name, marks=() if name in IN_SUITE else pytest.mark.sweep)
            for name, text, secrets, kept in cases]


def _assert_masked(text: str, secrets: list[str], kept: list[str]) -> str:
    masked = Redactor().text(text)
    leaked = [secret for secret in secrets if secret in masked]
    missing = [part for part in kept if part not in masked]
    assert not leaked and not missing, (leaked, missing, masked)
    return masked


@pytest.mark.parametrize("text,secrets,kept", _params(WRAPPED))
def test_a_wrapped_encoded_secret_is_joined_and_masked_whole(text, secrets, kept):
    masked = _assert_masked(text, secrets, kept)
    assert re.search(r"\[REDACTED:[^\]]* in (?:base64|hex)\]", masked), masked


@pytest.mark.parametrize("text,secrets,kept", _params(KEYS))
def test_an_altered_or_cut_private_key_is_masked_and_the_output_after_it_kept(text, secrets, kept):
    masked = _assert_masked(text, secrets, kept)
    assert "private-key" in masked or "key-field]" in masked, masked  # tls_key: "<the block>"


def test_the_variants_per_kind_are_enough():
    assert len({name.split("-")[-1] for name, *_ in WRAPPED}) >= 6
    assert len(WRAPPED) >= 100 and len(KEYS) >= 100
    assert len(RECEIVERS) * len(RECEIVER_PLACES) >= 24 and len(LOOK_ALIKES) >= 40


@pytest.mark.parametrize("url,kept,secret", RECEIVERS)
@pytest.mark.parametrize("place", RECEIVER_PLACES)
def test_a_receivers_url_keeps_its_destination_and_loses_its_secret_part(place, url, kept, secret):
    text = place.format(name="payments-pager", url=url)
    _assert_masked(text, [secret], [kept, "payments-pager"])


@pytest.mark.parametrize("text", LOOK_ALIKES)
def test_a_look_alike_is_left_alone(text):
    redactor = Redactor()
    assert redactor.text(text) == text
    assert redactor.masked == 0


# -- kind 3: linear work ------------------------------------------------------------------------

def _unbounded_repeats(tree) -> list[str]:
    """The repeats of a parsed regex without an upper bound, anywhere in it."""
    found = []
    for op, argument in tree:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT):
            if argument[1] == sre_constants.MAXREPEAT:
                found.append(str(argument[2])[:60])
            found += _unbounded_repeats(argument[2])
        elif op == sre_constants.SUBPATTERN:
            found += _unbounded_repeats(argument[3])
        elif op == sre_constants.BRANCH:
            for branch in argument[1]:
                found += _unbounded_repeats(branch)
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            found += _unbounded_repeats(argument[1])
        elif op == sre_constants.ATOMIC_GROUP:
            found += _unbounded_repeats(argument)
    return found


def test_every_format_rule_reads_a_bounded_window():
    """Each known-format rule (ours, the rewritten detect-secrets ones, private keys, URL and
    command-line rules) has an upper bound on every quantifier, so one match attempt reads a
    bounded window: finditer over n characters does at most n attempts of bounded work."""
    unbounded = {f"{p.name}: {p.regex.pattern[:50]}": _unbounded_repeats(sre_parser.parse(p.regex.pattern, p.regex.flags))
                 for p in Redactor().formats}
    assert {rule: found for rule, found in unbounded.items() if found} == {}


RUN_ANCHORED = {
    "_BASE64": secret_decoded._BASE64, "_PIECE": secret_decoded._PIECE, "_HEX": secret_decoded._HEX,
    "_JSON_STRING": redact._JSON_STRING,
}


def test_the_scanners_with_open_runs_start_only_where_their_run_starts():
    """The scanning regexes that take an open-ended run (a base64 block, a JSON literal) start
    with a negative lookbehind, so each run is read by one attempt, not one per character."""
    for name, pattern in RUN_ANCHORED.items():
        first = sre_parser.parse(pattern.pattern, pattern.flags)[0]
        assert first[0] == sre_constants.ASSERT_NOT and first[1][0] == -1, name


class _Meter:
    """Counts the characters the secret-field scan and the escaped-literal decoder walk."""

    def __init__(self, monkeypatch):
        self.key_chars = self.literal_chars = self.values = 0
        key_at, values, literal = secret_fields._key_at, secret_fields._values, redact.json_literal

        def counted_key_at(text, hit):
            start, end = key_at(text, hit)
            self.key_chars += end - start
            return start, end

        def counted_values(*args):
            self.values += 1
            return values(*args)

        def counted_literal(text):
            self.literal_chars += len(text)
            return literal(text)

        monkeypatch.setattr(secret_fields, "_key_at", counted_key_at)
        monkeypatch.setattr(secret_fields, "_values", counted_values)
        monkeypatch.setattr(redact, "json_literal", counted_literal)


FAMILIES = sorted(PATHOLOGICAL)


@pytest.mark.parametrize("family", [pytest.param(f, marks=() if f == "secret-fields" else pytest.mark.sweep)
                                    for f in FAMILIES])
def test_pathological_inputs_cost_a_counted_linear_work(family, monkeypatch):
    """Every pattern family on ~100 kB strings that made a backtracking scan quadratic: the
    regexes read bounded windows (above), and the loops around them are counted here: the
    characters the key scan walks and the literals decoded stay within twice the text, one
    value looked up per key at most. Times are in bench/redact_worst.py, not here."""
    formats = [p for p in Redactor().formats]
    for text in PATHOLOGICAL[family]:
        meter = _Meter(monkeypatch)
        for pattern in formats:
            for _ in pattern.regex.finditer(text):
                pass
        Redactor().text(text)
        assert meter.key_chars <= 2 * len(text) and meter.literal_chars <= 2 * len(text), (family, text[:40])
        assert meter.values <= len(text) // 4, (family, text[:40])
        monkeypatch.undo()


def test_the_key_lines_of_the_corpus_are_long_enough_to_be_seen():
    assert all(len(line) >= 16 for line in KEY_LINES[:-1])


def test_clean_texts_remembered_are_bounded_and_forgetting_them_changes_no_count(monkeypatch):
    texts = [f"step {n}: rule HighErrorRate{n % 7} loaded" for n in range(50)]
    secret = "token=ghp_" + "a1B2c3D4e5" * 4
    stream = [t for n, t in enumerate(texts) for t in (t, secret if n % 5 == 0 else t)] * 3

    def run(kept: int) -> tuple[list[str], int, dict, set]:
        monkeypatch.setattr(redact, "CLEAN_TEXTS_KEPT", kept)
        redactor = Redactor()
        out = [redactor.text(t) for t in stream]
        assert sum(map(len, redactor._clean)) <= kept
        return out, redactor.masked, dict(redactor.kinds), redactor.secrets

    unbounded, bounded = run(10**9), run(100)
    assert bounded == unbounded
    assert unbounded[1] == 30 and "[REDACTED" in unbounded[0][1], "the secret masked at each of its 30 uses"
