"""Benchmark: the redactor on its worst inputs, seconds per pattern family.

The pathological strings of tests/redact_hostile.py (about 100 kB each: a prefix repeated, a
run that almost matches, separators that never close), per family: the seconds every
known-format regex takes over them (finditer), and the seconds the whole redactor takes
(``Redactor.text``: formats, secret fields, escaped literals, encoded and wrapped forms).
Prints one row per family (the worst string and the sum) and the slowest single regex. The
unit tests assert bounded windows and counted scan work, never times; this is where speed is
read. Usage: .venv/bin/python bench/redact_worst.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from redact_hostile import PATHOLOGICAL

from exporter.redact import Redactor


def _best(run, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def family_figures(family: str, repeat: int) -> dict:
    """``{strings, regex_worst, regex_total, redact_worst, redact_total, slowest}`` of one
    family (seconds, best of ``repeat``); ``slowest`` is ``(seconds, rule name)``."""
    formats = Redactor().formats
    figures = {"strings": 0, "regex_worst": 0.0, "regex_total": 0.0, "redact_worst": 0.0,
               "redact_total": 0.0, "slowest": (0.0, "")}
    for text in PATHOLOGICAL[family]:
        figures["strings"] += 1
        regex_seconds = 0.0
        for pattern in formats:
            seconds = _best(lambda p=pattern, t=text: sum(1 for _ in p.regex.finditer(t)), repeat)
            regex_seconds += seconds
            figures["slowest"] = max(figures["slowest"], (seconds, pattern.name))
        redact_seconds = _best(lambda t=text: Redactor().text(t), repeat)
        figures["regex_worst"] = max(figures["regex_worst"], regex_seconds)
        figures["regex_total"] += regex_seconds
        figures["redact_worst"] = max(figures["redact_worst"], redact_seconds)
        figures["redact_total"] += redact_seconds
    return figures


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per measure, the best kept")
    args = parser.parse_args()
    print(f"{'family':<15} {'strings':>7} {'regex worst s':>13} {'regex sum s':>11} "
          f"{'redact worst s':>14} {'redact sum s':>12}  slowest regex")
    for family in sorted(PATHOLOGICAL):
        f = family_figures(family, args.repeat)
        print(f"{family:<15} {f['strings']:>7} {f['regex_worst']:>13.3f} {f['regex_total']:>11.3f} "
              f"{f['redact_worst']:>14.3f} {f['redact_total']:>12.3f}  {f['slowest'][1]} {f['slowest'][0]:.3f}")


if __name__ == "__main__":
    main()
