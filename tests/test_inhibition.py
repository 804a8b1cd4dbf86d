"""Inhibition simulator and matcher parser, checked against the real Alertmanager 0.25.

- the outcomes of ``fixtures/cases/inhibit-equal-missing/EXPECT.md`` through the simulator;
- unit tests of the matcher syntax and semantics (anchoring, negative matchers,
  missing label = "");
- cross-checks against the real server (``prometheus-alertmanager``): the case's seven
  alerts, a seeded set of generated configs, and regex probes, all compared on
  ``status.state`` and ``status.inhibitedBy`` of ``GET /api/v2/alerts``;
- matcher syntax accepted/rejected exactly like ``amtool check-config``.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest
import yaml

from grader.am_syntax import classic_syntax_problems
from grader.go_regex import compile_go_regex
from grader.inhibition import (
    InhibitConfigError,
    compile_inhibit_rule,
    inhibit_rules_of,
    inhibited_by,
    inhibitors,
)
from grader.matchers import (
    EQ,
    NE,
    NRE,
    RE,
    MatcherError,
    config_matchers,
    matchers_from_map,
    matches_all,
    new_matcher,
    parse_matcher,
    parse_matcher_list,
    parse_matchers,
)
from grader.routing import check_config
from recorder.alertmanager_server import AlertmanagerServer, binary_available, label_key

CASE_DIR = Path(__file__).parent / "fixtures" / "cases" / "inhibit-equal-missing"

needs_server = pytest.mark.skipif(
    not binary_available(), reason="prometheus-alertmanager (Debian package) not installed"
)
needs_amtool = pytest.mark.skipif(shutil.which("amtool") is None, reason="amtool not installed")

# The seven alerts of EXPECT.md. Names and the labels it states; NodeDown and DiskFull
# carry no severity (else NodeDown would also be a "critical" source for rule 0).
EQUAL_MISSING_ALERTS: list[dict[str, str]] = [
    {"alertname": "CritA", "severity": "critical", "cluster": "eu1"},
    {"alertname": "CritNoCluster", "severity": "critical"},
    {"alertname": "WarnSame", "severity": "warning", "cluster": "eu1"},
    {"alertname": "WarnOther", "severity": "warning", "cluster": "us2"},
    {"alertname": "WarnNoCluster", "severity": "warning"},
    {"alertname": "NodeDown", "node": "n1"},
    {"alertname": "DiskFull", "node": "n1"},
]
# alertname -> (rule index, source alertname) or None, as EXPECT.md states.
EQUAL_MISSING_EXPECTED: dict[str, tuple[int, str] | None] = {
    "CritA": None,
    "CritNoCluster": None,
    "WarnSame": (0, "CritA"),
    "WarnOther": None,
    "WarnNoCluster": (0, "CritNoCluster"),
    "NodeDown": None,
    "DiskFull": (1, "NodeDown"),
}


def _case_rules() -> list[dict]:
    return inhibit_rules_of(yaml.safe_load((CASE_DIR / "alertmanager.yml").read_text()))


# ----------------------------------------------------------------- EXPECT.md outcomes


def test_equal_missing_expect_outcomes():
    result = inhibited_by(_case_rules(), EQUAL_MISSING_ALERTS)
    names = [a["alertname"] for a in EQUAL_MISSING_ALERTS]
    got = {names[i]: None if r is None else (r[0], names[r[1]]) for i, r in enumerate(result)}
    assert got == EQUAL_MISSING_EXPECTED


def test_equal_label_missing_on_both_sides_counts_as_equal():
    rules = _case_rules()
    crit, warn = {"severity": "critical"}, {"severity": "warning"}
    # present on one side only: not equal
    assert inhibited_by(rules, [crit, {**warn, "cluster": "x"}]) == [None, None]
    assert inhibited_by(rules, [{**crit, "cluster": "x"}, warn]) == [None, None]
    # missing on both sides: equal; an empty value is the same as missing
    assert inhibited_by(rules, [crit, warn]) == [None, (0, 0)]
    assert inhibited_by(rules, [{**crit, "cluster": ""}, warn]) == [None, (0, 0)]


def test_self_match_and_two_sided_sources_do_not_inhibit():
    rules = _case_rules()
    # NodeDown matches both sides of rule 1: alone it is not muted by itself.
    assert inhibited_by(rules, [{"alertname": "NodeDown", "node": "n1"}]) == [None]
    # Two NodeDown alerts (distinct labels) on the same node both match both sides:
    # neither inhibits the other.
    two = [
        {"alertname": "NodeDown", "node": "n1", "instance": "a"},
        {"alertname": "NodeDown", "node": "n1", "instance": "b"},
    ]
    rule = [
        {
            "source_matchers": ['alertname="NodeDown"'],
            "target_matchers": ['alertname=~"NodeDown|DiskFull"'],
            "equal": ["node"],
        }
    ]
    assert inhibited_by(rule, two) == [None, None]
    # A source matching only the source side does inhibit a two-sided target.
    rule2 = [
        {
            "source_matchers": ["alertname=~NodeDown|Power"],
            "target_matchers": ["alertname=NodeDown"],
        }
    ]
    assert inhibited_by(rule2, [{"alertname": "NodeDown"}, {"alertname": "Power"}]) == [
        (0, 1),
        None,
    ]


def test_source_that_is_itself_inhibited_still_inhibits():
    rules = [
        {"source_match": {"severity": "critical"}, "target_match": {"severity": "warning"}},
        {"source_match": {"severity": "warning"}, "target_match": {"severity": "info"}},
    ]
    alerts = [{"severity": "critical"}, {"severity": "warning"}, {"severity": "info"}]
    assert inhibited_by(rules, alerts) == [None, (0, 0), (1, 1)]
    assert inhibitors(rules, alerts) == [[], [(0, 0)], [(1, 1)]]


def test_first_rule_and_source_reported_all_listed():
    rules = [
        {"source_matchers": ["kind=a"], "target_matchers": ["kind=t"]},
        {"source_matchers": ["kind=~a|b"], "target_matchers": ["kind=t"]},
    ]
    alerts = [{"kind": "t"}, {"kind": "b"}, {"kind": "a"}]
    assert inhibited_by(rules, alerts) == [(0, 2), None, None]
    assert inhibitors(rules, alerts)[0] == [(0, 2), (1, 1), (1, 2)]


def test_empty_sides_match_everything():
    # No target matchers: every alert is a target; no source matchers: every alert a source.
    rules = [{"source_matchers": ['severity="critical"'], "equal": ["cluster"]}]
    alerts = [
        {"severity": "critical", "cluster": "a"},
        {"x": "1", "cluster": "a"},
        {"cluster": "b"},
    ]
    # alert 0 matches both sides, sources matching both are excluded -> not muted
    assert inhibited_by(rules, alerts) == [None, (0, 0), None]


# ------------------------------------------------------------------- config validation


@pytest.mark.parametrize(
    "config, fragment",
    [
        ([], "expected a map"),
        ({"inhibit_rules": {"a": 1}}, "expected a list"),
        ({"inhibit_rules": ["x"]}, "inhibit_rules[0]: expected a map"),
        ({"inhibit_rules": [{"bogus": 1}]}, "unknown field(s) bogus"),
        ({"inhibit_rules": [{}, {"source_matchers": ["1a=b"]}]}, "inhibit_rules[1]"),
        ({"inhibit_rules": [{"source_matchers": 'a="b"'}]}, "source_matchers: expected a list"),
        ({"inhibit_rules": [{"target_matchers": ['a=~"("']}]}, "error parsing regexp"),
        ({"inhibit_rules": [{"source_match": {"1a": "x"}}]}, "invalid label name '1a'"),
        ({"inhibit_rules": [{"source_match_re": {"a": "(?=x)"}}]}, "unsupported Perl syntax"),
        ({"inhibit_rules": [{"source_match": {"a": ["x"]}}]}, "expected a string"),
        ({"inhibit_rules": [{"equal": "cluster"}]}, "equal: expected a list"),
        ({"inhibit_rules": [{"equal": ["a.b"]}]}, "is not a valid label name"),
    ],
)
def test_inhibit_rules_of_rejects_malformed(config, fragment):
    with pytest.raises(InhibitConfigError) as info:
        inhibit_rules_of(config)
    assert fragment in str(info.value)
    assert isinstance(info.value, ValueError)


def test_inhibit_rules_of_accepts_missing_and_legacy():
    assert inhibit_rules_of({"route": {"receiver": "x"}}) == []
    assert inhibit_rules_of({"inhibit_rules": None}) == []
    rules = inhibit_rules_of(
        {
            "inhibit_rules": [
                {
                    "source_match": {"severity": "critical", "prio": 1},
                    "source_match_re": {"team": "db|api"},
                    "target_matchers": ['severity="warning"', "env!=prod"],
                    "equal": ["team", "team"],
                }
            ]
        }
    )
    r = compile_inhibit_rule(rules[0])
    assert [str(m) for m in r.source] == ['severity="critical"', 'prio="1"', 'team=~"db|api"']
    assert [str(m) for m in r.target] == ['severity="warning"', 'env!="prod"']
    assert r.equal == ("team",)
    assert "mutes" in r.describe()


def test_inhibited_by_rejects_bad_alerts():
    with pytest.raises(ValueError, match=r"alerts\[0\]"):
        inhibited_by([], [{"a": 1}])
    with pytest.raises(InhibitConfigError):
        inhibited_by([{"source_matchers": ["bad"]}], [{"a": "b"}])


# ----------------------------------------------------------------------------- matchers


def test_parse_matcher_forms():
    assert parse_matcher('severity="critical"') == new_matcher("severity", EQ, "critical")
    assert parse_matcher("env!=prod") == new_matcher("env", NE, "prod")
    assert parse_matcher('  node =~ "n[0-9]+"  ') == new_matcher("node", RE, "n[0-9]+")
    assert parse_matcher("job!~a|b") == new_matcher("job", NRE, "a|b")
    assert parse_matcher("x=") == new_matcher("x", EQ, "")
    assert parse_matcher('x=""') == new_matcher("x", EQ, "")
    assert parse_matcher("msg=two words") == new_matcher("msg", EQ, "two words")
    assert parse_matcher(r'q="say \"hi\"\n\\ \d"').value == 'say "hi"\n\\ \\d'
    assert parse_matcher("a==b") == new_matcher("a", EQ, "=b")  # Alertmanager's own quirk
    assert parse_matcher(":ns:x=1").name == ":ns:x"


def test_parse_matchers_lists_and_braces():
    assert parse_matchers('{a="b", c!~"x|y",}') == [
        new_matcher("a", EQ, "b"),
        new_matcher("c", NRE, "x|y"),
    ]
    assert parse_matchers("a=b,c!=d") == [new_matcher("a", EQ, "b"), new_matcher("c", NE, "d")]
    assert parse_matchers('a="x,y"') == [new_matcher("a", EQ, "x,y")]
    assert parse_matchers('a="b\\",c"') == [new_matcher("a", EQ, 'b",c')]
    assert parse_matchers("") == [] and parse_matchers("{}") == []
    assert parse_matcher_list(['a="1"', "{b=2, c=~3}"]) == [
        new_matcher("a", EQ, "1"),
        new_matcher("b", EQ, "2"),
        new_matcher("c", RE, "3"),
    ]
    assert parse_matcher_list(None) == []


@pytest.mark.parametrize(
    "text",
    [
        '1a="b"',
        "a.b=c",
        'a="b',
        'a=b"c',
        'a=~"("',
        "a",
        "a=b,,c=d",
        "a=x,y",
        'a=~"(?=x)"',
        r'a=~"(a)\1"',
        'a=~"a++"',
        r'a=~"\Z"',
    ],
)
def test_parse_matchers_rejects(text):
    with pytest.raises(MatcherError) as info:
        parse_matchers(text)
    assert isinstance(info.value, ValueError)
    assert str(info.value)


def test_regex_is_fully_anchored():
    m = parse_matcher('node=~"n"')
    assert not m.matches({"node": "n1"}) and not m.matches({"node": "xn"})
    assert m.matches({"node": "n"})
    alt = parse_matcher('sev=~"crit|warn"')
    assert alt.matches({"sev": "warn"}) and not alt.matches({"sev": "critwarn"})
    assert not alt.matches({"sev": "warning"})
    assert not parse_matcher('x=~"a$"').matches({"x": "a\n"})  # Go: $ is end of text
    assert parse_matcher('n=~"n.*"').matches({"n": "n12"})


def test_negative_matchers_and_missing_label_is_empty():
    assert parse_matcher('node!="n1"').matches({})
    assert not parse_matcher('node!="n1"').matches({"node": "n1"})
    assert parse_matcher('node=""').matches({}) and not parse_matcher('node=""').matches(
        {"node": "a"}
    )
    assert parse_matcher('node!=""').matches({"node": "a"}) and not parse_matcher(
        'node!=""'
    ).matches({})
    assert parse_matcher('node=~""').matches({})
    assert parse_matcher('node=~".*"').matches({})
    assert not parse_matcher('node=~".+"').matches({})
    assert parse_matcher('node!~".+"').matches({})
    assert not parse_matcher('node!~".*"').matches({"node": "x"}) and not parse_matcher(
        'node!~".*"'
    ).matches({})
    assert parse_matcher('node!~"n1|n2"').matches({"node": "n3"}) and parse_matcher(
        'node!~"n1|n2"'
    ).matches({})
    assert matches_all([], {}) is True
    assert matches_all(parse_matchers('a="1", b!~"x"'), {"a": "1"})


def test_legacy_maps():
    assert matchers_from_map({"a": "x", "n": 3, "t": True}, regex=False) == [
        new_matcher("a", EQ, "x"),
        new_matcher("n", EQ, "3"),
        new_matcher("t", EQ, "true"),
    ]
    [m] = matchers_from_map({"sev": "crit.*"}, regex=True, field="source_match_re")
    assert m.matches({"sev": "critical"}) and not m.matches({"sev": "xcritical"})
    with pytest.raises(MatcherError, match="target_match_re.sev"):
        matchers_from_map({"sev": "("}, regex=True, field="target_match_re")
    with pytest.raises(MatcherError, match="invalid label name"):
        matchers_from_map({"a-b": "x"}, regex=False)
    route = {"match": {"a": "1"}, "match_re": {"b": "2|3"}, "matchers": ["c!=4"]}
    assert [str(m) for m in config_matchers(route)] == ['a="1"', 'b=~"2|3"', 'c!="4"']


@pytest.mark.parametrize(
    "pattern, yes, no",
    [
        ("(?i)crit", ["CRIT", "crit", "Crit"], ["xcrit"]),
        ("a(?i)b", ["ab", "aB"], ["AB"]),
        ("(a(?i)b)c", ["aBc"], ["aBC"]),
        ("[[:digit:]]+", ["123"], ["12a", ""]),
        ("[^[:alpha:]]", ["1"], ["a"]),
        ("a{,2}", ["a{,2}"], ["aa", "a"]),
        ("a{2}", ["aa"], ["a{2}"]),
        (r"\d+", ["42"], ["٤٢"]),
        (r"\Qa.b\E", ["a.b"], ["axb"]),
        (r"\x{41}", ["A"], ["a"]),
        ("a|", ["a", ""], ["b"]),
        ("", [""], ["a"]),
    ],
)
def test_go_regex_translation(pattern, yes, no):
    rx = compile_go_regex(pattern)
    for v in yes:
        assert rx.fullmatch(v), (pattern, v)
    for v in no:
        assert not rx.fullmatch(v), (pattern, v)


# Matcher strings whose acceptance must agree with amtool check-config (Alertmanager 0.25).
NEWER_ONLY_MATCHERS = {'1a="b"', 'a.b="c"', ':x="1"', 'a=~"(?<n>x)"'}
"""Matchers Alertmanager 0.28 accepts and 0.25 rejects, among the probes: label names its
UTF-8 parser allows, and ``(?<name>...)`` groups (Go 1.22's regexp, which 0.28 is built with)."""

SYNTAX_PROBES = [
    "foo=",
    'foo=""',
    "foo=bar baz",
    '{a="b", c!~"x|y",}',
    'a="b",c="d"',
    ':x="1"',
    '1a="b"',
    'a.b="c"',
    'a="b',
    'a=b"c',
    'a=~"("',
    "a==b",
    'a="b\\"c"',
    '  a  =  "b"  ',
    "{}",
    "",
    "a",
    "a=~",
    'a="x,y"',
    "a=x,y",
    "a=b,,c=d",
    'a=~"(?i)x"',
    'a=~"(?=x)"',
    'a=~"a**"',
    'a=~"a{2}{3}"',
    'a=~"[[:alpha:]]"',
    'a=~"x{,3}"',
    'a=~"a++"',
    'a=~"(?P<n>x)"',
    'a=~"(?<n>x)"',
    'a=~"x{1001}"',
    'a=~"x{2,1}"',
    'a=~"[[:foo:]]"',
    'a=~"(?i)a(?-i)b"',
    'a=~"(?-)b"',
    'a=~"[z-a]"',
    'a=~"a)"',
    'a=~"\\\\8"',
    'a=~"\\\\Z"',
    'a=~"\\\\z"',
    'a=~"\\\\d[\\\\d\\\\s]"',
]


@needs_amtool
def test_matcher_syntax_agrees_with_amtool(tmp_path):
    """The simulator's matcher syntax is the grader's on every amtool version: amtool
    check-config plus the classic (0.25) syntax the grader keeps (grader/am_syntax.py)."""
    disagreements, amtool_disagrees = [], []
    for k, text in enumerate(SYNTAX_PROBES):
        cfg = {
            "route": {"receiver": "r"},
            "receivers": [{"name": "r"}],
            "inhibit_rules": [{"source_matchers": [text]}],
        }
        path = tmp_path / f"probe{k}.yml"
        path.write_text(yaml.safe_dump(cfg))
        amtool_ok = check_config(path) is None
        grader_ok = amtool_ok and not classic_syntax_problems(cfg)  # what a grade sees
        try:
            parse_matcher_list([text])
            ours = True
        except MatcherError:
            ours = False
        if ours != grader_ok:
            disagreements.append((text, ours, grader_ok))
        if ours != amtool_ok:
            amtool_disagrees.append(text)
    assert disagreements == []
    # amtool alone disagrees only where a newer amtool accepts what 0.25 rejects
    assert set(amtool_disagrees) <= NEWER_ONLY_MATCHERS


# ----------------------------------------------------- cross-check with the real server


def _server_outcome(alerts_json: dict, label_sets: list[dict[str, str]]):
    """Per label set: (suppressed?, set of inhibiting label keys) from the server."""
    by_fp = {a["fingerprint"]: key for key, a in alerts_json.items()}
    out = []
    for ls in label_sets:
        a = alerts_json[label_key(ls)]
        inhibited = {by_fp.get(fp, fp) for fp in a["status"]["inhibitedBy"] or []}
        out.append((a["status"]["state"] == "suppressed", inhibited))
    return out


def _server_semantics() -> str:
    """The simulator semantics of the server binary the tests start (its --version)."""
    from grader.inhibition import semantics_of
    from grader.tools import tool_version
    from recorder.alertmanager_server import BINARY

    return semantics_of(tool_version(BINARY))


def _simulated_outcome(rules: list[dict], label_sets: list[dict[str, str]],
                       semantics: str = "0.25"):
    """Per label set: (suppressed?, label keys of the sources the server may name).

    Alertmanager stops at the first muting rule and names one of its sources."""
    out = []
    for pairs, first in zip(
        inhibitors(rules, label_sets, semantics), inhibited_by(rules, label_sets, semantics),
        strict=True
    ):
        assert (first is None) == (not pairs)
        assert first is None or first == pairs[0]
        allowed = {label_key(label_sets[s]) for r, s in pairs if first and r == first[0]}
        out.append((bool(pairs), allowed))
    return out


def _compare(server, simulated) -> list[str]:
    """Differences between server and simulator outcomes, in words."""
    problems = []
    for k, ((s_sup, s_by), (m_sup, m_allowed)) in enumerate(zip(server, simulated, strict=True)):
        if s_sup != m_sup:
            problems.append(f"alert {k}: server suppressed={s_sup}, simulator {m_sup}")
        elif s_sup and (len(s_by) != 1 or not s_by <= m_allowed):
            problems.append(f"alert {k}: server inhibitedBy {s_by}, simulator allows {m_allowed}")
        elif not s_sup and s_by:
            problems.append(f"alert {k}: active but inhibitedBy {s_by}")
    return problems


@needs_server
def test_equal_missing_against_real_alertmanager():
    with AlertmanagerServer(CASE_DIR / "alertmanager.yml") as am:
        am.post_alerts(EQUAL_MISSING_ALERTS)
        listed = am.wait_for_alerts(EQUAL_MISSING_ALERTS)
    server = _server_outcome(listed, EQUAL_MISSING_ALERTS)
    simulated = _simulated_outcome(_case_rules(), EQUAL_MISSING_ALERTS, _server_semantics())
    assert _compare(server, simulated) == []
    # and both say what EXPECT.md says
    names = {label_key(a): a["alertname"] for a in EQUAL_MISSING_ALERTS}
    for alert, (suppressed, by) in zip(EQUAL_MISSING_ALERTS, server, strict=True):
        want = EQUAL_MISSING_EXPECTED[alert["alertname"]]
        assert suppressed == (want is not None)
        assert {names[k] for k in by} == (set() if want is None else {want[1]})


LABEL_VALUES = {
    "alertname": ["A", "B", "C"],
    "severity": ["critical", "warning", "info"],
    "cluster": ["eu1", "us2"],
    "node": ["n1", "n2"],
    "service": ["api", "db"],
}
LABEL_REGEXES = {
    "alertname": ["A|B", "A", "[AB]", ".*", ".+", "", "a", "(?i)a"],
    "severity": ["crit.*", "warn|info", "critical|warning", ".*", ".+", "", "crit"],
    "cluster": ["eu.*", "eu1|us2", "us", ".*", ".+", ""],
    "node": ["n[12]", "n1", "n", ".*", ".+", ""],
    "service": ["api|db", "a.*", "", ".+"],
}
N_GENERATED = 60


def _gen_matcher(rng: random.Random, name: str) -> tuple[str, str, str]:
    op = rng.choice([EQ, EQ, NE, RE, NRE])
    if op in (EQ, NE):
        value = "" if rng.random() < 0.15 else rng.choice(LABEL_VALUES[name])
    else:
        value = rng.choice(LABEL_REGEXES[name])
    return name, op, value


def _render_side(rng: random.Random, side: str, matchers: list[tuple[str, str, str]]) -> dict:
    """Write one side of a rule in a random but equivalent syntax."""
    if not matchers:
        return {}
    if all(op in (EQ, RE) for _, op, _ in matchers) and rng.random() < 0.35:
        out: dict = {}
        eq = {n: v for n, op, v in matchers if op == EQ}
        rx = {n: v for n, op, v in matchers if op == RE}
        if eq:
            out[f"{side}_match"] = eq
        if rx:
            out[f"{side}_match_re"] = rx
        return out
    texts = []
    for n, op, v in matchers:
        simple = v and all(c.isalnum() for c in v) and rng.random() < 0.5
        texts.append(f"{n}{op}{v}" if simple else f'{n}{op}"{v}"')
    if len(texts) > 1 and rng.random() < 0.5:
        return {f"{side}_matchers": ["{" + ", ".join(texts) + "}"]}
    return {f"{side}_matchers": texts}


def _gen_case(rng: random.Random) -> tuple[list[dict], list[dict[str, str]]]:
    names = list(LABEL_VALUES)
    rules = []
    for _ in range(rng.randint(1, 3)):
        rule: dict = {}
        for side in ("source", "target"):
            k = rng.choices([0, 1, 2], weights=[1, 5, 4])[0]
            picked = rng.sample(names, k)
            rule.update(_render_side(rng, side, [_gen_matcher(rng, n) for n in picked]))
        equal = rng.sample(names, rng.choices([0, 1, 2], weights=[2, 5, 3])[0])
        if equal:
            rule["equal"] = equal
        rules.append(rule)
    alerts: list[dict[str, str]] = []
    seen = set()
    for _ in range(rng.randint(3, 6)):
        labels = {
            n: rng.choice(vals)
            for n, vals in LABEL_VALUES.items()
            if rng.random() < (0.9 if n == "alertname" else 0.6)
        }
        key = label_key(labels)
        if key not in seen:
            seen.add(key)
            alerts.append(labels)
    return rules, alerts


# Regexes whose Go meaning the translation in grader.go_regex must reproduce.
REGEX_PROBES = [
    ("(?i)crit", ["CRIT", "xcrit"]),
    ("a(?i)b", ["aB", "AB"]),
    ("[[:digit:]]+", ["123", "12a"]),
    ("x{,2}", ["x{,2}", "xx"]),
    (r"\d\w\s", ["1a ", "1a\t", "١a "]),
    ("a$", ["a", "a\n"]),
    ("a.b", ["a\nb", "axb"]),
    ("(?s)a.b", ["a\nb"]),
    ("^a|b$", ["a", "b", "ab"]),
    (r"\Qa.b\E", ["a.b", "axb"]),
    ("[^a]", ["b", "a", "é"]),
    ("é+", ["éé", "e"]),
    ("(?i)é", ["É"]),
    ("", ["", "x"]),
]


def _regex_probe_cases():
    """(rules, alerts) cases: a source alert plus one target per probe value; the
    target is muted iff the regex matches its ``probe`` value."""
    cases = []
    for pattern, values in REGEX_PROBES:
        rules = [
            {
                "source_match": {"probe_src": "1"},
                "target_match_re": {"probe": pattern},
            }
        ]
        alerts = [{"probe_src": "1"}] + [
            {"probe": v, "probe_id": str(i)} for i, v in enumerate(values)
        ]
        cases.append((rules, alerts))
    return cases


def _scope_rule(rule: dict, tag: str) -> dict:
    """The rule restricted to alerts with ``case=tag`` (both sides, plus ``equal``).

    ``case`` in ``equal`` alone does not isolate cases: a rule of case Y would still
    apply to a source and a target that are both in case X. The matcher on both sides
    keeps the rule's meaning (its two-sided exclusion included) within the case."""
    scoped = dict(rule)
    for side in ("source", "target"):
        scoped[f"{side}_matchers"] = list(rule.get(f"{side}_matchers") or []) + [f'case="{tag}"']
    scoped["equal"] = list(rule.get("equal") or []) + ["case"]
    return scoped


def _merge_cases(cases):
    """One server config for many (rules, alerts) cases, each under its own ``case``."""
    merged_rules: list[dict] = []
    tagged = []
    for i, (rules, alerts) in enumerate(cases):
        tag = f"c{i:03d}"
        merged_rules += [_scope_rule(r, tag) for r in rules]
        tagged.append((rules, [{**a, "case": tag} for a in alerts]))
    config = {
        "route": {"receiver": "default", "group_wait": "1h"},
        "receivers": [{"name": "default"}],
        "inhibit_rules": merged_rules,
    }
    return config, tagged


def _generated_cases():
    rng = random.Random(20230409)
    return [_gen_case(rng) for _ in range(N_GENERATED)] + _regex_probe_cases()


def test_merging_cases_keeps_each_case_meaning():
    config, tagged = _merge_cases(_generated_cases())
    all_alerts = [a for _, alerts in tagged for a in alerts]
    merged = [s for s, _ in _simulated_outcome(config["inhibit_rules"], all_alerts)]
    per_case = [s for rules, alerts in tagged for s, _ in _simulated_outcome(rules, alerts)]
    assert merged == per_case


@needs_server
def test_generated_cases_against_real_alertmanager():
    cases = _generated_cases()
    config, tagged_cases = _merge_cases(cases)
    all_alerts = [a for _, alerts in tagged_cases for a in alerts]
    with AlertmanagerServer(yaml.safe_dump(config, sort_keys=False)) as am:
        am.post_alerts(all_alerts)
        listed = am.wait_for_alerts(all_alerts)

    agree = 0
    disagreements = []
    suppressed = two_sided_seen = 0
    for i, (rules, alerts) in enumerate(tagged_cases):
        server = _server_outcome(listed, alerts)
        # The simulator sees the case's own rules, without the `case` scoping, with the
        # semantics of the server's version (alerts posted in list order, one end time).
        simulated = _simulated_outcome(rules, alerts, _server_semantics())
        problems = _compare(server, simulated)
        if problems:
            disagreements.append((i, rules, alerts, problems))
        else:
            agree += 1
        suppressed += sum(s for s, _ in server)
        for r in rules:
            compiled = compile_inhibit_rule(r)
            two_sided_seen += any(
                matches_all(compiled.source, a) and matches_all(compiled.target, a) for a in alerts
            )
    print(
        f"cross-check: {agree}/{len(cases)} cases agree, {len(all_alerts)} alerts, "
        f"{suppressed} suppressed, {two_sided_seen} rules with a two-sided alert"
    )
    assert disagreements == [], disagreements[:3]
    # The generated set must exercise both outcomes and the two-sided exclusion.
    assert N_GENERATED >= 30
    assert 0.15 * len(all_alerts) < suppressed < 0.85 * len(all_alerts)
    assert two_sided_seen >= 5


# Alertmanager 0.30's index (PR #4607; run against 0.33.1): one source per rule and equal
# values, the last posted; a two-sided target is not muted through a two-sided source, and
# no other source is tried. The case where 0.25 mutes both two-sided alerts and 0.33 neither.
INDEX_RULE = {"target_matchers": ['alertname=~".+"', 'node=~"n1"'], "equal": []}
INDEX_ALERTS = [{"alertname": "B", "cluster": "us2", "node": "n1"},
                {"alertname": "C", "severity": "info", "service": "db"},
                {"alertname": "C", "node": "n1"}]


def test_the_0_30_index_keeps_one_source_and_skips_a_two_sided_one():
    old = inhibited_by([INDEX_RULE], INDEX_ALERTS, "0.25")
    new = inhibited_by([INDEX_RULE], INDEX_ALERTS, "0.30")
    assert old == [(0, 1), None, (0, 1)]
    assert new == [None, None, None]
    # posted the other way round, the one-sided source is the indexed one: both muted again
    flipped = [INDEX_ALERTS[2], INDEX_ALERTS[0], INDEX_ALERTS[1]]
    assert inhibited_by([INDEX_RULE], flipped, "0.30") == [(0, 2), (0, 2), None]


def test_semantics_follow_the_version_and_unknown_ones_are_refused():
    from grader.inhibition import semantics_of

    assert [semantics_of(v) for v in ("0.25.0", "0.28.1+ds", "0.29.0", "0.30.0", "0.33.1")] == [
        "0.25", "0.25", "0.25", "0.30", "0.30"]
    with pytest.raises(ValueError, match="unknown inhibition semantics"):
        inhibited_by([INDEX_RULE], INDEX_ALERTS, "0.99")
