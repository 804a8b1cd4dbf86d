"""Mask secrets in every string before it reaches a site: known token formats, the secret
fields of Alertmanager and Prometheus configs, credentials in URLs, private key blocks.

Three kinds of rule (DESIGN.md, "Secrets"):

- **known formats**: the regex detectors of Yelp's ``detect-secrets`` (AWS, GitHub, GitLab,
  Slack, Stripe, Twilio, SendGrid, npm, PyPI, JWT, Discord, Telegram, Mailchimp, Square,
  Azure storage, Artifactory, OpenAI...) plus provider-documented formats it lacks
  (:data:`EXTRA_FORMATS`: Anthropic, Hugging Face, GitHub fine-grained, Google API keys,
  Grafana, Vault, DigitalOcean, Shopify, Linear, Doppler, age, Atlassian, Postman, New Relic,
  Databricks, Pulumi, Mailgun...), private key blocks (the whole PEM block, not only its
  header) and credentials in URLs (``user:password@``, keys as the user part, secret query
  parameters, webhook URLs whose path is the credential);
- **secret fields**: a value named by a secret-looking key (``*password*``, ``*secret*``,
  ``*token*``, ``credentials``, ``api_key``, ``*_key``: ``routing_key``, ``service_key``,
  ``bearer_token``, ``smtp_auth_password``...) in YAML, JSON, INI or ``KEY=value`` text, or as
  a key of a JSON object the site writes; ``*_file``/``*_path`` keys and placeholders
  (``<secret>``, ``${VAR}``, ``{{ ... }}``) are left alone;
- **high entropy**: quoted strings that detect-secrets' entropy detectors flag (base64 over
  4.5 bits a character, hex over 3.0). What the site must show is exempt *by field*, never by
  guessing: values of :data:`EXEMPT_KEYS` (fingerprints, checksums, digests, uuids such as
  episode and session ids, tool call ids, commits), as JSON fields or as ``"key": "value"``
  in text.

A match becomes ``[REDACTED:<kind>]``. :class:`Redactor` counts strings and matches per
kind for the report (kinds and counts, never values).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contract.errors import BadInput

MASK = "[REDACTED]"


@dataclass(frozen=True)
class SecretPattern:
    """One kind of secret: a compiled regex; ``group`` is the part that is the secret
    (0: the whole match)."""

    name: str
    regex: re.Pattern[str]
    group: int | str = 0
    needles: tuple[str, ...] = ()
    """Lowercase substrings one of which a text must hold for the regex to be tried (a fast
    test that skips most patterns on long texts; empty: always tried)."""


def _p(name: str, regex: str, group: int | str = 0, needles: tuple[str, ...] = ()) -> SecretPattern:
    return SecretPattern(name, re.compile(regex), group, needles)


DETECT_SECRETS_NEEDLES = {
    "artifactory-credentials": ("akc", "ap"), "aws-access-key": ("a3t", "abia", "acca", "akia", "asia", "aws"),
    "azure-storage-account-access-key": ("accountkey=",), "ibm-cos-hmac-credentials": ("cos",),
    "json-web-token": ("eyj",), "mailchimp-access-key": ("-us",), "npm-tokens": (":_authtoken=",),
    "openai-token": ("t3blbkfj",), "pypi-token": ("pypi-",), "sendgrid-api-key": ("sg.",),
    "slack-token": ("xox", "hooks.slack.com"), "square-oauth-secret": ("sq0csp-",),
    "stripe-access-key": ("k_live_",), "telegram-bot-token": (":",), "twilio-api-key": ("ac", "sk"),
    "gitlab-token": ("gl", "gr1348941"), "github-token": ("_",),
}
"""Needles (see :class:`SecretPattern`) for the detect-secrets detectors, by kind."""


def _detect_secrets_formats() -> list[SecretPattern]:
    """The regex detectors of detect-secrets (keyword, entropy and public-IP ones excluded:
    those are covered by the field and entropy rules here, and an IP is not a secret)."""
    from detect_secrets.plugins import (
        artifactory,
        aws,
        azure_storage_key,
        discord,
        github_token,
        gitlab_token,
        ibm_cos_hmac,
        jwt,
        mailchimp,
        npm,
        openai,
        pypi_token,
        sendgrid,
        slack,
        square_oauth,
        stripe,
        telegram_token,
        twilio,
    )

    detectors = [
        artifactory.ArtifactoryDetector, aws.AWSKeyDetector, azure_storage_key.AzureStorageKeyDetector,
        discord.DiscordBotTokenDetector, github_token.GitHubTokenDetector,
        gitlab_token.GitLabTokenDetector, ibm_cos_hmac.IbmCosHmacDetector, jwt.JwtTokenDetector,
        mailchimp.MailchimpDetector, npm.NpmDetector, openai.OpenAIDetector,
        pypi_token.PypiTokenDetector, sendgrid.SendGridDetector, slack.SlackDetector,
        square_oauth.SquareOAuthDetector, stripe.StripeDetector,
        telegram_token.TelegramBotTokenDetector, twilio.TwilioKeyDetector,
    ]
    patterns = []
    for detector in detectors:
        kind = re.sub(r"[^a-z0-9]+", "-", detector.secret_type.lower()).strip("-")
        for regex in detector.denylist:
            # a detector's groups mark the secret inside its context (AWS secret keys after
            # aws_secret...=); without groups the whole match is the secret
            patterns.append(SecretPattern(kind, regex, 1 if regex.groups else 0,
                                          DETECT_SECRETS_NEEDLES.get(kind, ())))
    return patterns


EXTRA_FORMATS: tuple[SecretPattern, ...] = (
    # detect-secrets' JWT regex stops before the signature (its last part is lazy): take all three
    _p("json-web-token", r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*"),
    _p("anthropic-key", r"sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{20,}"),
    _p("openai-key", r"sk-(?<![A-Za-z0-9_]sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    _p("huggingface-token", r"hf_[A-Za-z0-9]{30,}"),
    _p("github-token", r"github_pat_[A-Za-z0-9_]{22,}"),
    _p("github-token", r"gh[pousr]_[A-Za-z0-9]{30,}"),
    _p("slack-token", r"xapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    _p("slack-token", r"xox[abposre]-[A-Za-z0-9-]{10,}"),
    _p("google-api-key", r"AIza[0-9A-Za-z_\-]{35}"),
    _p("stripe-key", r"(?:sk|rk)_(?:live|test)_(?<![A-Za-z0-9_][sr]k_live_)(?<![A-Za-z0-9_][sr]k_test_)[0-9a-zA-Z]{16,}"),
    _p("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    _p("aws-secret-key", r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+=]{40})", 1,
       ("aws",)),
    _p("grafana-token", r"gl(?:sa|c|ft)_[A-Za-z0-9_+/=]{32,}"),
    _p("vault-token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,}"),
    _p("digitalocean-token", r"do[por]_v1_[a-f0-9]{64}\b"),
    _p("shopify-token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    _p("linear-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    _p("doppler-token", r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}\b"),
    _p("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"),
    _p("atlassian-token", r"ATATT3[A-Za-z0-9_\-=]{100,}"),
    _p("postman-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    _p("newrelic-key", r"NR(?:AK|AA|II)-[A-Z0-9]{27}\b"),
    _p("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?\b"),
    _p("pulumi-token", r"pul-(?<![A-Za-z0-9_]pul-)[a-f0-9]{40}\b"),
    _p("mailgun-key", r"key-(?<![A-Za-z0-9_]key-)[0-9a-zA-Z]{32}\b"),
    _p("npm-token", r"npm_[A-Za-z0-9]{36}\b"),
    _p("pypi-token", r"pypi-AgE[A-Za-z0-9_\-]{50,}"),
    _p("sendgrid-key", r"SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
    _p("square-token", r"sq0(?:atp|csp|idp)-[0-9A-Za-z\-_]{22,}"),
    _p("twilio-key", r"(?:SK|AC)(?<![A-Za-z0-9_]SK)(?<![A-Za-z0-9_]AC)[0-9a-f]{32}\b"),
    _p("gitlab-token", r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,}"),
    _p("azure-storage-key", r"AccountKey=[A-Za-z0-9+/=]{40,}"),
    _p("telegram-bot-token", r"(?<![0-9])\d{8,10}:AA[0-9A-Za-z_\-]{33}\b", 0, (":aa",)),
)
"""Provider-documented formats detect-secrets 1.5 does not cover (or covers narrowly)."""

PRIVATE_KEY = _p(
    "private-key",
    r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY( BLOCK)?-----[\s\S]*?(?:-----END \1PRIVATE KEY\2-----|\Z)"
    r"|PuTTY-User-Key-File-\d[\s\S]*?(?:Private-MAC: [0-9a-f]+|\Z)",
)
URL_RULES: tuple[SecretPattern, ...] = (
    _p("url-password", r"\b[A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@\"'<>]*:([^/\s@\"'<>]+)@", 1, ("://",)),
    _p("url-key", r"\b[A-Za-z][A-Za-z0-9+.\-]*://([A-Za-z0-9_\-]{16,})@", 1, ("://",)),
    _p("url-query-secret",
       r"(?i)[?&](?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|password|"
       r"passwd|key|sig|signature|code|client[_-]?secret|private[_-]?token)=([^&\s\"'<>#`]{6,})", 1,
       ("?", "&")),
    _p("webhook", r"https?://hooks\.slack\.com/[^\s\"'<>`]+"),
    _p("webhook", r"https?://(?:[A-Za-z0-9-]+\.)?discord(?:app)?\.com/api/webhooks/[^\s\"'<>`]+"),
    _p("webhook", r"https?://[A-Za-z0-9.-]*(?:webhook\.office\.com|outlook\.office(?:365)?\.com)/webhook[^\s\"'<>`]*"),
    _p("webhook", r"https?://[^\s\"'<>`/]+(?:/[^\s\"'<>`/]+)*/hooks/[A-Za-z0-9_\-]{8,}[^\s\"'<>`]*"),
    _p("bearer", r"(?i)\b(?:bearer|token)\s+((?=[A-Za-z0-9._~+/=\-]*\d)[A-Za-z0-9._~+/=\-]{16,})", 1,
       ("bearer", "token")),
    _p("basic-auth", r"(?i)\bbasic\s+((?=[A-Za-z0-9+/]*\d)[A-Za-z0-9+/]{12,}={0,2})", 1, ("basic",)),
    _p("email", r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b", 0, ("@",)),
)

SECRET_KEY_WORDS = (r"password|passwd|passphrase|pwd|secret|token|credentials?|api[_-]?key|apikey|"
                    r"access[_-]?key|private[_-]?key|auth[_-]?key|signing[_-]?key|encryption[_-]?key|"
                    r"[a-z0-9]+_key|cookie|authorization|dsn")
SECRET_KEY = re.compile(rf"(?i)^(?:[A-Za-z0-9_.\-]*[_.\-])?(?:{SECRET_KEY_WORDS})s?$")
"""A key whose value is a secret: routing_key, service_key, api_key, bearer_token, password,
smtp_auth_password, credentials, client_secret, auth_token, DD_API_KEY..."""
ENV_SECRET_KEY = re.compile(r"^[A-Z0-9_]*(?:PASSWORD|PASSWD|PWD|SECRET|TOKEN|APIKEY|API_KEY)S?$")
"""An environment variable named for a secret, words run together (``PGPASSWORD``)."""
NOT_SECRET_KEY = re.compile(r"(?i)(?:_file|_files|_path|_env|_name|_type|_count|_id_file|_tokens|"
                            r"_ttl|_length|_size|_header|_url_file|^max_tokens|^tokens?_used)$")
"""Keys that look secret but name something else: a file holding the secret, token counts."""
EXEMPT_KEYS = frozenset({
    "fingerprint", "task_fingerprint", "sha256", "sha1", "sha", "md5", "checksum", "task_checksum",
    "digest", "content_hash", "hash", "etag", "episode_id", "session_id", "trajectory_id",
    "tool_call_id", "source_call_id", "call_id", "id", "request_id", "commit", "commit_id",
    "source_commit", "git_commit_id", "revision", "run_id", "trial_id", "job_id", "uuid", "uid",
})
"""Fields whose values look random by nature and must reach the site as they are: no entropy
rule applies to them (known token formats still do)."""
EXEMPT_SUFFIXES = ("_id", "_uid", "_sha", "_sha1", "_sha256", "_digest", "_checksum", "_hash")
"""Field name endings with the same meaning as :data:`EXEMPT_KEYS` (``commit_sha``...)."""
PATH_KEYS = frozenset({"path", "file", "filename", "file_name", "changed_files", "paths"})
"""Fields that name files: random-looking runs in them are masked too (:meth:`Redactor.path`)."""
PLACEHOLDER = re.compile(
    r"^(?:<[^<>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*\}\}|%\([^)]*\)s|\*+|x+|X+|"
    r"\[REDACTED[^\]]*\]|REDACTED|redacted|null|none|None|~|true|false|)$", re.DOTALL)
"""Values of secret fields that are not secrets: templates, env references, masks."""

_SECRET_WORD = re.compile(r"(?i)password|passwd|passphrase|pwd|secret|token|credential|"
                          r"api[_-]?key|apikey|_key|authorization|cookie|dsn")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_OPERATOR = re.compile(r"""(?P<kq>\\?["']?)[ \t]*(?P<op>:=|=>|=~|!=|!~|:|=)[ \t]*""")
_TAGS = re.compile(r"""(?:(?:!![A-Za-z]+|![A-Za-z]*|&[A-Za-z0-9_-]+)[ \t]+)*""")
"""YAML tags and anchors before a value (``!!str``, ``&pdkey``): skipped, the value is after."""
_VALUE = re.compile(
    r'\\"(?P<eq>(?:[^"\\]|\\[^"])*)\\"'  # escaped JSON inside a string: \"value\"
    r'|"""(?P<tq>[\s\S]*?)"""'  # TOML and Python triple quotes
    r"|'''(?P<ts>[\s\S]*?)'''"
    r'|"(?P<dq>(?:[^"\\\n]|\\.)*)"'
    r"|'(?P<sq>[^'\n]*)'"
    r"|\[(?P<flow>[^\]\n]*)\]"  # a flow list: [a, b]
    r"|(?P<block>[|>][+-]?[0-9]?)[ \t]*(?=\n|$)"  # a YAML block scalar: the next lines
    r"""|(?P<bare>[^\s"',;\[\]<>#`|]+)""")
_QUOTED = re.compile(r"""(["'])([A-Za-z0-9+/=_\-]{16,})\1""")
_JSON_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_KEY_BEFORE = re.compile(r"""([A-Za-z0-9_.\-]+)["']?\s*[:=]?\s*$""")
_EXPLICIT_VALUE = re.compile(r"\n[ \t]*(?:#|//)?[ \t]*:[ \t]*(\S[^\n]*)")
CLI_RULES: tuple[SecretPattern, ...] = (
    _p("cli-password", r"(?:^|\s)(?:-u|--user)[ =][^\s:]+:(\S+)", 1, ("-u", "--user")),
    _p("cli-password", r"(?i)--(?:password|passwd|pass|token|api[-_]?key|secret|client[-_]secret|"
       r"auth[-_]token|access[-_]key|secret[-_]key|private[-_]key)(?:=|\s+)([^\s\"']+|\"[^\"]*\"|'[^']*')",
       1, ("--",)),
    _p("cli-password", r"\bmysql(?:dump|admin|sh)?\b[^\n]*?\s-p([^\s-][^\s]*)", 1, ("mysql",)),
    _p("bearer", r"(?i)\b(?:geniekey|sso-key|apikey|api-key)\s+([A-Za-z0-9._~+/=\-]{16,})", 1,
       ("geniekey", "sso-key", "apikey", "api-key")),
    _p("webhook", r"/integrations/v1/[A-Za-z0-9_-]+/([A-Za-z0-9]{16,})", 1, ("/integrations/",)),
)
"""Secrets on command lines (curl -u, --password, mysql -p), API key schemes, and webhook
URLs whose path ends in the credential (Grafana OnCall)."""


def _key_at(text: str, hit: re.Match) -> tuple[int, int]:
    """The whole key around a secret word: word characters, dots and dashes on both sides."""
    start, end = hit.start(), hit.end()
    while start > 0 and text[start - 1] in _KEY_CHARS:
        start -= 1
    while end < len(text) and text[end] in _KEY_CHARS:
        end += 1
    return start, end


def _uncommented(line: str) -> tuple[int, str]:
    """``(offset, rest)``: a line without its leading comment marker (``#``, ``//``), so
    commented-out YAML is read like YAML."""
    stripped = line.lstrip(" \t")
    for marker in ("#", "//"):
        if stripped.startswith(marker):
            offset = len(line) - len(stripped) + len(marker)
            return offset, line[offset:]
    return 0, line


def _line_indent(text: str, position: int) -> int:
    line_start = text.rfind("\n", 0, position) + 1
    _, line = _uncommented(text[line_start:position])
    return len(line) - len(line.lstrip(" ?-"))


def _following_lines(text: str, after: int, indent: int) -> list[tuple[int, int]]:
    """Spans of the lines after ``after`` indented more than ``indent`` (a YAML value that
    continues below its key: a block scalar, a list, a scalar on the next line; commented-out
    lines are read without their ``#``)."""
    spans = []
    position = text.find("\n", after)
    while position != -1 and position + 1 < len(text):
        start = position + 1
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        offset, line = _uncommented(text[start:end])
        if line.strip():
            if len(line) - len(line.lstrip(" ")) <= indent:
                break
            stripped = line.lstrip(" ")
            value_start = start + offset + len(line) - len(stripped)
            if stripped.startswith("- "):
                value_start += 2
            spans.append((value_start, end))
        position = end if end < len(text) else -1
    return spans


def _assignments(text: str):
    """``(key, value start, value end)`` of every value given to a key that holds a secret word:
    ``key: value`` and ``key=value`` in YAML, JSON (also escaped inside a string), TOML, INI and
    shell forms, with YAML tags and anchors skipped, flow lists, block scalars, values on the
    next lines and ``? key`` / ``: value`` pairs. PromQL label matchers (``{token="x"}``) are
    not assignments. Found from the words, so long texts with none are fast."""
    seen = set()
    for hit in _SECRET_WORD.finditer(text):
        start, end = _key_at(text, hit)
        if end in seen:
            continue
        seen.add(end)
        key = text[start:end]
        operator = _OPERATOR.match(text, end)
        if operator is None:
            line_start = text.rfind("\n", 0, start) + 1
            if text[line_start:start].rstrip().endswith("?"):  # YAML explicit key: ": x" below
                below = _EXPLICIT_VALUE.match(text, end)
                if below:
                    yield key, below.start(1), below.end(1)
            continue
        if operator.group("op") in ("=~", "!=", "!~"):
            continue  # a comparison or a PromQL matcher, not an assignment
        before = text[:start].rstrip(" \t")
        if operator.group("op") == "=" and before.endswith(("{", ",")) and \
                text[operator.end():operator.end() + 1] in ("'", '"'):
            continue  # a PromQL label matcher: {token="expired"}
        value_at = _TAGS.match(text, operator.end()).end()
        value = _VALUE.match(text, value_at)
        if value is None or value.group("block") is not None:
            for span in _following_lines(text, value_at, _line_indent(text, start)):
                yield key, *span
            continue
        name = next(n for n in ("eq", "tq", "ts", "dq", "sq", "flow", "bare") if value.group(n) is not None)
        if name == "flow":
            for item in re.finditer(r"[^,\s][^,]*", value.group("flow")):
                yield key, value.start("flow") + item.start(), value.start("flow") + item.end()
            continue
        yield key, value.start(name), value.end(name)


def _field_value_is_secret(key: str, value: str) -> bool:
    """Whether ``value`` given to ``key`` is masked: the key names a secret (or is an
    environment variable named for one), the value is not a placeholder, a reference to a
    file, a template, or a short word of prose (``password: it expired``)."""
    stripped = value.strip()
    if not (is_secret_key(key) or ENV_SECRET_KEY.match(key)) or PLACEHOLDER.match(stripped):
        return False
    if _is_reference(stripped) or stripped.startswith(("{{", "${", "$(")):
        return False
    return not (stripped.isalpha() and len(stripped) < 6)


def _entropy_detectors():
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )

    return Base64HighEntropyString(), HexHighEntropyString()


class Redactor:
    """Masks secrets in strings and JSON values; counts masked strings and matches per kind.

    ``extra`` adds user patterns (``--redact-patterns``): a match becomes ``[REDACTED]``.
    ``secrets`` collects every masked text (a search index can drop its tokens); ``kinds``
    counts matches per kind for :meth:`report`.
    """

    def __init__(self, extra: Iterable[SecretPattern] = ()):
        self.formats: tuple[SecretPattern, ...] = (
            PRIVATE_KEY, *EXTRA_FORMATS, *_detect_secrets_formats(), *URL_RULES, *CLI_RULES, *extra)
        self.masked = 0
        self.secrets: set[str] = set()
        self.kinds: Counter[str] = Counter()
        self._base64, self._hex = _entropy_detectors()
        self._cache: dict[str, str] = {}

    @classmethod
    def with_extra(cls, pattern_file: Path | None) -> Redactor:
        """The built-in rules plus those of ``pattern_file`` (see :func:`read_patterns`)."""
        return cls(read_patterns(pattern_file) if pattern_file is not None else ())

    # -- finding -----------------------------------------------------------------------------

    def _spans(self, text: str, entropy: bool) -> list[tuple[int, int, str]]:
        spans = []
        lowered = text.lower() if len(text) > 256 else None
        for pattern in self.formats:
            if lowered is not None and pattern.needles and not any(n in lowered for n in pattern.needles):
                continue
            for match in pattern.regex.finditer(text):
                group = pattern.group if match.group(pattern.group) is not None else 0
                if match.end(group) > match.start(group):
                    spans.append((match.start(group), match.end(group), pattern.name))
        for key, start, end in _assignments(text):
            if _field_value_is_secret(key, text[start:end]):
                spans.append((start, end, _field_kind(key)))
        if entropy:
            for match in _QUOTED.finditer(text):
                if not self._high_entropy(match.group(2)):
                    continue
                before = _KEY_BEFORE.search(text, max(0, match.start() - 80), match.start())
                key = before.group(1).lower() if before else ""
                if key in EXEMPT_KEYS or key.endswith(EXEMPT_SUFFIXES):
                    continue
                spans.append((match.start(2), match.end(2), "high-entropy"))
        return spans

    def _high_entropy(self, value: str) -> bool:
        """detect-secrets' base64 entropy measure over 4.5 bits a character. Hex strings are
        left alone: a quoted hex string in a text is a digest or a commit far more often than a
        key (keys under a secret field are masked by the field rules)."""
        if re.fullmatch(r"[0-9a-fA-F]+", value):
            return False
        return self._base64.calculate_shannon_entropy(value) > 4.5

    def _escaped_spans(self, text: str, entropy: bool, depth: int = 0) -> list[tuple[int, int, str]]:
        """Secrets inside JSON string literals written into the text (``"{\\"password\\": ..."``,
        YAML with ``\\n`` line breaks): each literal holding an escape is decoded, searched, and
        every escaped form of a secret found there is a span of the text (two levels deep)."""
        spans = []
        if depth > 2 or "\\" not in text:
            return spans
        for literal in _JSON_STRING.finditer(text):
            if "\\" not in literal.group(0):
                continue
            try:
                decoded = orjson.loads(literal.group(0))
            except orjson.JSONDecodeError:
                continue
            found = self._spans(decoded, entropy) + self._escaped_spans(decoded, entropy, depth + 1)
            for start, end, kind in found:
                escaped = orjson.dumps(decoded[start:end]).decode()[1:-1]
                for match in re.finditer(re.escape(escaped), literal.group(0)):
                    spans.append((literal.start() + match.start(), literal.start() + match.end(), kind))
        return spans

    def find(self, text: str, *, entropy: bool = True) -> list[tuple[int, int, str]]:
        """``[(start, end, kind)]`` of the secrets in ``text``, in order, merged where they
        overlap; an e-mail match that overlaps another secret is dropped (in
        ``https://user:pw@host`` the ``pw@host`` part is a URL password, not an address)."""
        spans = self._spans(text, entropy) + self._escaped_spans(text, entropy)
        others = [(s, e) for s, e, k in spans if k != "email"]
        spans = [span for span in spans if span[2] != "email"
                 or not any(s < span[1] and span[0] < e for s, e in others)]
        merged: list[list[Any]] = []
        for start, end, kind in sorted(spans):
            if merged and start < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end, kind])
        return [(s, e, k) for s, e, k in merged]

    # -- masking -----------------------------------------------------------------------------

    def text(self, value: str, *, entropy: bool = True) -> str:
        """``value`` with every secret masked as ``[REDACTED:<kind>]``; counts it once if
        anything changed."""
        key = value if entropy else "\0" + value
        cached = self._cache.get(key)
        if cached is not None:
            if cached != value:
                self.masked += 1
            return cached
        spans = self.find(value, entropy=entropy)
        result = value
        for start, end, kind in reversed(spans):
            self.secrets.add(value[start:end])
            self.kinds[kind] += 1
            result = result[:start] + (MASK if kind == "custom" else f"[REDACTED:{kind}]") + result[end:]
        if len(value) < 4096:
            self._cache[key] = result
        if result != value:
            self.masked += 1
        return result

    def field(self, key: str, value: str) -> str:
        """A JSON string value under ``key``: wholly masked when the key names a secret (and
        the value is not a placeholder), entropy rules off for :data:`EXEMPT_KEYS`."""
        if _field_value_is_secret(key, value):
            self.secrets.add(value)
            self.kinds[_field_kind(key)] += 1
            self.masked += 1
            return f"[REDACTED:{_field_kind(key)}]"
        if key.lower() in PATH_KEYS:
            return self.path(value)
        exempt = key.lower() in EXEMPT_KEYS or key.lower().endswith(EXEMPT_SUFFIXES)
        return self.text(value, entropy=not exempt)

    def path(self, value: str) -> str:
        """A file name or path (``path`` fields, diff paths): the text rules, then random-looking
        runs of letters and digits (a token cut apart by ``/`` is in no documented format)."""
        result = self.text(value, entropy=False)
        spans = _random_runs(self, result, strict=True)
        for start, end, kind in reversed(spans):
            self.secrets.add(result[start:end])
            self.kinds[kind] += 1
            result = result[:start] + f"[REDACTED:{kind}]" + result[end:]
        if spans and result != value:
            self.masked += 1
        return result

    def value(self, value: Any, key: str | None = None) -> Any:
        """A JSON-like value with every string masked (dict keys too; a string's own key
        decides the field rules, see :meth:`field`)."""
        if isinstance(value, str):
            return self.text(value) if key is None else self.field(key, value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(item, k if isinstance(k, str) else None)
                    for k, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(item, key) for item in value]
        return value

    def dataclass_fields(self, instance: Any, names: Iterable[str]) -> Any:
        """A copy of dataclass ``instance`` with the fields ``names`` masked (see :meth:`value`)."""
        return dataclasses.replace(instance, **{name: self.value(getattr(instance, name)) for name in names})

    def report(self) -> str:
        """One line for the user: strings masked and matches per kind, never the values."""
        if not self.kinds:
            return "redacted: nothing looked like a secret"
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.kinds.items()))
        return f"redacted: {self.masked} strings masked ({kinds})"


def is_secret_key(key: str) -> bool:
    """Whether a field named ``key`` holds a secret (see :data:`SECRET_KEY`)."""
    return bool(SECRET_KEY.match(key)) and not NOT_SECRET_KEY.search(key)


def _field_kind(key: str) -> str:
    lowered = key.lower()
    for word, kind in (("password", "password"), ("passwd", "password"), ("pwd", "password"),
                       ("secret", "secret"), ("token", "token"), ("credential", "credentials"),
                       ("key", "key"), ("authorization", "credentials"), ("cookie", "cookie"),
                       ("dsn", "dsn")):
        if word in lowered:
            return f"{kind}-field"
    return "secret-field"


def _is_reference(value: str) -> bool:
    """A value that points at a secret instead of holding one (a file path)."""
    return value.startswith(("/", "./", "../", "file:"))


def read_patterns(path: Path) -> list[SecretPattern]:
    """Extra patterns from a file: one regex a line; blank lines and lines starting with ``#`` skipped.

    A match of such a pattern becomes ``[REDACTED]``.

    Raises:
        BadInput: the file cannot be read or a line is not a valid regex (names the line).
    """
    from contract.untrusted import read_file

    try:
        lines = read_file(path, cap=1024 * 1024).decode("utf-8").splitlines()
    except UnicodeDecodeError as err:
        raise BadInput(path, f"cannot read the redaction patterns: {err}") from None
    patterns = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            patterns.append(SecretPattern("custom", re.compile(line)))
        except re.error as err:
            raise BadInput(path, f"line {number} is not a valid regex: {err}") from None
    return patterns


_ID_RUN = re.compile(r"[A-Za-z0-9+]{20,}")


def _class_changes(run: str) -> float:
    """The share of neighbouring characters of different kinds (upper, lower, digit): near 0.2
    in CamelCase words (``JvmGcPauseAboveBudget``), 0.5-1 in random tokens."""
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" for c in run]
    return sum(a != b for a, b in itertools.pairwise(kinds)) / max(1, len(kinds) - 1)


def _random_runs(redactor: Redactor, value: str, *, strict: bool = False) -> list[tuple[int, int, str]]:
    """Runs of 20 or more letters and digits that look random: an id or a file name has no
    quotes or keys to say what it holds, and a token cut apart by separators is no longer in
    its documented format. For ids: over 4.2 bits a character, or 32 hex digits and more; with
    ``strict`` (file names, which carry digests and CamelCase words): 24 or more characters,
    over 4.5 bits, mixing character kinds at over 0.6 of their neighbours, never hex."""
    found = []
    for match in _ID_RUN.finditer(value):
        run = match.group(0)
        hexadecimal = re.fullmatch(r"[0-9a-fA-F]+", run) is not None
        entropy = redactor._base64.calculate_shannon_entropy(run)
        if strict:
            random = not hexadecimal and len(run) >= 24 and entropy > 4.5 and _class_changes(run) > 0.6
        else:
            random = (hexadecimal and len(run) >= 32) or (not hexadecimal and entropy > 4.2)
        if random:
            found.append((match.start(), match.end(), "random-token"))
    return found


def redact_id(redactor: Redactor, value: str) -> str:
    """``value`` when it holds no secret (a known format, or a random-looking run of letters
    and digits), else a new id: each masked part becomes
    ``REDACTED-<kind>`` and the id ends in 8 hex of the old id's sha256, so two ids that
    differ only in their secrets stay distinct (a valid id, contract.ids)."""
    import hashlib

    spans = redactor.find(value, entropy=False)
    spans = sorted(spans + [run for run in _random_runs(redactor, value)
                            if not any(s < run[1] and run[0] < e for s, e, _ in spans)])
    if not spans:
        return value
    result = value
    for start, end, kind in reversed(spans):
        redactor.kinds[kind] += 1
        redactor.secrets.add(value[start:end])
        result = result[:start] + f"REDACTED-{kind}" + result[end:]
    redactor.masked += 1
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]
    from contract.ids import slug_id

    return slug_id(f"{result}-{digest}")
