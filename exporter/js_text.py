"""JavaScript's forms of numbers and texts, in Python: what the run view's scripts write, for the
pages the exporter writes in their place (exporter/run_page.py).

Each function names the ECMAScript operation it follows (ECMA-262, 2024 edition) or the
URL Standard's (WHATWG) for the two address encoders.
"""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal, localcontext
from typing import Any

JS_SPACE = "\t\n\x0b\x0c\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""What a JS regular expression's ``\\s`` and ``String.prototype.trim`` take as white space
(ECMA-262 WhiteSpace and LineTerminator), as a character class's body."""
NOT_SPACE = f"[^{JS_SPACE}]"
"""A JS regular expression's ``\\S``."""
_TRIM = re.compile(f"^[{JS_SPACE}]+|[{JS_SPACE}]+$")


def finite(value: Any) -> bool:
    """``typeof value === "number" && Number.isFinite(value)`` for a JSON value."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def number_string(value: float) -> str:
    """``Number::toString(value)`` (ECMA-262 6.1.6.1.20): the shortest digits that read back as
    ``value`` (Python's ``repr`` finds the same), written plainly from 1e-7 up to 1e21 and in
    exponent form (``1e-7``, ``1e+21``, ``1.5e+300``) outside."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    digits_tuple, exponent = Decimal(repr(abs(value))).as_tuple()[1:]
    digits = "".join(map(str, digits_tuple)).rstrip("0")
    exponent += len("".join(map(str, digits_tuple))) - len(digits)
    k, n = len(digits), len(digits) + exponent
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * -n + digits
    power = f"e{'+' if n - 1 >= 0 else '-'}{abs(n - 1)}"
    return sign + (digits if k == 1 else digits[0] + "." + digits[1:]) + power


def js_string(value: Any) -> str:
    """JavaScript's ``String(value)`` of a JSON value: numbers as :func:`number_string` (an
    integer past 2**53 first becomes the nearest double, as JSON.parse makes it)."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if abs(value) <= 2**53 else number_string(float(value))
    if isinstance(value, float):
        return number_string(value)
    return str(value)


def to_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed(digits)`` (ECMA-262 21.1.3.3) of a finite number: the exact
    binary value rounded to ``digits`` decimals, a tie to the larger; ``String(value)`` from
    1e21 up; -0 and values rounding to 0 from below keep JS's forms (``0.0000``, ``-0.0000``)."""
    if abs(value) >= 1e21:
        return js_string(value)
    if value == 0:
        value = 0.0  # -0 is not below 0: "0.0000"
    if value < 0:
        return "-" + to_fixed(-value, digits)
    with localcontext() as context:
        context.prec = 80
        return str(Decimal(value).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def clip(text: Any, limit: int) -> str:
    """lib/format.js ``clip``: ``text`` cut to ``limit`` UTF-16 code units with an ellipsis, a
    surrogate pair never cut in two (the cut ends before it)."""
    value = text if isinstance(text, str) else js_string(text)
    units = value.encode("utf-16-le", "surrogatepass")
    if len(units) <= 2 * limit:
        return value
    return units[:2 * limit].decode("utf-16-le", "ignore") + "\u2026"


def trim(text: str) -> str:
    """``String.prototype.trim``: JS white space and line terminators off both ends."""
    return _TRIM.sub("", text)


def encode_uri_component(text: str) -> str:
    """``encodeURIComponent`` (ECMA-262 19.2.6.5): UTF-8 percent-encoded but for ASCII letters,
    digits and ``-_.!~*'()``."""
    return "".join(char if char.isascii() and (char.isalnum() or char in "-_.!~*'()")
                   else "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass")) for char in text)


def form_encode(text: str) -> str:
    """A value as ``URLSearchParams.toString()`` writes it (WHATWG URL, the
    application/x-www-form-urlencoded serializer): ASCII letters, digits and ``*-._`` kept,
    a space as ``+``, the rest UTF-8 percent-encoded."""
    return "".join(char if char.isascii() and (char.isalnum() or char in "*-._") else "+" if char == " "
                   else "".join(f"%{byte:02X}" for byte in char.encode("utf-8", "surrogatepass")) for char in text)
