"""Private key blocks as the redactor meets them: whole, cut short, escaped inside a string,
numbered by ``cat -n``, with encryption headers or odd-case markers.

One rule of :mod:`exporter.secret_formats` (kind ``private-key``). The block's shape is RFC 7468
(PEM: ``-----BEGIN <label>-----``, base64 lines, ``-----END <label>-----``) and RFC 1421
section 4.6 (``Proc-Type:`` / ``DEK-Info:`` headers, then a blank line, before the body), plus
OpenSSH, PGP (``PRIVATE KEY BLOCK``) and PuTTY key files. A block matches in two ways:

- with its END marker: everything from BEGIN to the END of a private key, where the text in
  between holds no run of four dashes (so one BEGIN never reaches past the next marker);
- cut (no END, an output truncated): BEGIN, then header lines (``Proc-Type:``, PuTTY's
  ``Public-Lines:``), blank lines and base64 lines (16 characters or more), up to the first
  line that is none of these, so the output after a cut key is not masked with it (a short
  last line counts when it ends in ``=`` padding or ends the text).

Lines are separated by a line break, or by ``\\n`` written as an escape inside a JSON or YAML
string (once or twice escaped), or by spaces (a key flattened onto one line); each line may
carry a line-number prefix (``cat -n``, ``nl``: ``     2<TAB>``; ``grep -n``: ``2:``).
Every quantifier is bounded, so a match attempt reads a bounded window of the text.
"""

from __future__ import annotations

import re

MAX_BLOCK = 16384
"""The longest block text between BEGIN and END read (an RSA 8192 key is about 6,400)."""

_LABEL = r"(?i:(?:[A-Z0-9]{1,16}[ ]){0,4}PRIVATE[ ]KEY(?:[ ]BLOCK)?)"
_BEGIN = r"(?<!-)-{4,6}[ ]?(?i:BEGIN)[ ]" + _LABEL + r"[ ]?-{4,6}"
_END = r"-{4,6}[ ]?(?i:END)[ ]" + _LABEL + r"[ ]?-{4,6}"
_BREAK = r"(?:[ \t]{0,8}(?:\r?\n|(?:\\{1,3}r)?\\{1,3}n)|[ \t]{1,8})"
"""A line break: a real one, an escaped ``\\n`` (JSON/YAML string, once or twice escaped) or spaces."""
_NUMBER = r"[ \t]{0,16}(?:\d{1,7}(?:\t|:|[ ]{1,4}))?[ \t]{0,8}"
"""Indentation and an optional line-number prefix (``cat -n``, ``nl``, ``grep -n``)."""
_HEADER = r"[A-Za-z][A-Za-z-]{0,31}:[ \t]{0,8}[^\s\\\"']{1,200}"
_BASE64_LINE = r"[A-Za-z0-9+/]{16,8192}={0,2}"
_LAST_LINE = r"[A-Za-z0-9+/]{1,15}(?:={1,2}|(?=[\"']|\s{0,8}\Z))"
_CUT_BODY = (rf"(?:{_BREAK}{_NUMBER}(?:{_HEADER}|{_BASE64_LINE}|(?={_BREAK}))){{0,1024}}"
             rf"(?:{_BREAK}{_NUMBER}{_LAST_LINE})?")
_WHOLE_BODY = rf"(?:[^-]|-(?!---)){{0,{MAX_BLOCK}}}?{_END}"

PEM_BLOCK = rf"{_BEGIN}(?:{_WHOLE_BODY}|{_CUT_BODY})"
"""A PEM (or OpenSSH, PGP) private key block, whole or cut."""
PUTTY_BLOCK = (rf"PuTTY-User-Key-File-\d(?:(?:[^P]|P(?!uTTY-User-Key-File)){{0,{MAX_BLOCK}}}?"
               rf"Private-MAC: [0-9a-f]{{1,128}}|[^\n]{{0,128}}+{_CUT_BODY})")
"""A PuTTY key file, to its ``Private-MAC`` line or, cut, to the end of its last key line."""

PRIVATE_KEY_REGEX = re.compile(f"{PEM_BLOCK}|{PUTTY_BLOCK}")
"""Either kind of block (the ``private-key`` rule)."""
