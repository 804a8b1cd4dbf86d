"""The viewer's shared helpers, run in Chromium as the pages import them (static/js/lib/*.js of an
exported site): blameAt's memo gives the plain backwards walk's answers, formatCount writes counts
as toLocaleString("en") does."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# The walk blameAt did before it kept its answers (lib/data.js, release 0.3.0): the reference.
BLAME_AGAINST_THE_WALK = """async () => {
  const { blameAt, stateAt } = await import("./static/js/lib/data.js");
  function walk(run, n, index, checkId) {
    if (stateAt(run.steps[n], index) !== "0") return null;
    for (let m = n; m >= 0; m -= 1) {
      const blame = run.steps[m].blame || {};
      if (Object.hasOwn(blame, checkId)) return { step: m, hunk: blame[checkId] };
      if (stateAt(run.steps[m], index) !== "0") break;
    }
    return null;
  }
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const problems = [];
  let compared = 0;
  let blamed = 0;
  for (let trial = 0; trial < 40; trial += 1) {
    const checks = 6;
    const steps = [];
    for (let n = 0; n < 60; n += 1) {
      const states = Array.from({ length: checks }, () => "10-"[Math.floor(random() * (random() < 0.7 ? 2 : 3))]).join("");
      const blame = {};
      for (let c = 0; c < checks; c += 1) {
        // blame where a check turns red, and now and then where it is not red (an odd file)
        const turnedRed = states[c] === "0" && (n === 0 || steps[n - 1].checks[c] !== "0");
        if ((turnedRed && random() < 0.8) || random() < 0.05) blame[`c${c}`] = random() < 0.5 ? null : Math.floor(random() * 3);
      }
      steps.push({ checks: states, blame });
    }
    const run = { steps };
    // visit the steps in a random order, twice, so memo entries from earlier walks are reused
    const order = [...steps.keys(), ...steps.keys()].sort(() => random() - 0.5);
    for (const n of order) {
      for (let c = 0; c < checks; c += 1) {
        const want = walk(run, n, c, `c${c}`);
        const got = blameAt(run, n, c, `c${c}`);
        compared += 1;
        if (want) blamed += 1;
        if (JSON.stringify(want) !== JSON.stringify(got)) problems.push([trial, n, c, want, got]);
      }
    }
  }
  return { problems: problems.slice(0, 5), compared, blamed };
}"""


def test_blame_at_gives_the_walks_answers_in_any_order(page, served_site):
    page.goto(f"{served_site.url}index.html")
    result = page.evaluate(BLAME_AGAINST_THE_WALK)
    assert result["problems"] == [], result["problems"]
    assert result["compared"] == 40 * 120 * 6
    assert result["blamed"] > 1000, "the random runs must have blamed failures to compare"


def test_format_count_writes_counts_as_to_locale_string(page, served_site):
    page.goto(f"{served_site.url}index.html")
    result = page.evaluate("""async () => {
      const { formatCount } = await import("./static/js/lib/format.js");
      const values = [0, 7, 999, 1000, 1001, 12345, 999999, 1000000, 1234567890, -1, -1000, -987654, 2 ** 53];
      return values.map((value) => [value, formatCount(value), value.toLocaleString("en")]);
    }""")
    assert [(value, mine) for value, mine, theirs in result if mine != theirs] == []
    assert [mine for _, mine, _ in result][5] == "12,345"
