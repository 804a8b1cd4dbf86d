"""Known secret formats as regexes: detect-secrets' detectors, provider-documented token formats,
private key blocks, credentials in URLs and on command lines, and the user's extra patterns.

The first kind of rule of :mod:`exporter.redact` (DESIGN.md, "Secrets"): each
:class:`SecretPattern` names a kind; a match (or its ``group``) is the secret.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from contract.errors import BadInput
from exporter.secret_keys import PRIVATE_KEY_REGEX


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


def detect_secrets_formats() -> list[SecretPattern]:
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
            regex = re.compile(DETECT_SECRETS_LINEAR.get(regex.pattern, regex.pattern), regex.flags)
            # a detector's groups mark the secret inside its context (AWS secret keys after
            # aws_secret...=); without groups the whole match is the secret
            patterns.append(SecretPattern(kind, regex, 1 if regex.groups else 0,
                                          DETECT_SECRETS_NEEDLES.get(kind, ())))
    return patterns


DETECT_SECRETS_LINEAR = {
    r'(?:\s|=|:|"|^)AKC[a-zA-Z0-9]{10,}(?:\s|"|$)': r'(?:\s|=|:|"|^)AKC[a-zA-Z0-9]{10,1024}(?:\s|"|$)',
    r'(?:\s|=|:|"|^)AP[\dABCDEF][a-zA-Z0-9]{8,}(?:\s|"|$)':
        r'(?:\s|=|:|"|^)AP[\dABCDEF][a-zA-Z0-9]{8,1024}(?:\s|"|$)',
    r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?":
        r"(?<![A-Za-z0-9_=-])eyJ[A-Za-z0-9-_=]{1,8192}\.[A-Za-z0-9-_=]{1,8192}",
    r"\/\/.+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*":
        r"(?<!/)//[^\s/]{1,253}(?:/[^\s/:]{1,128}){0,8}/:_authToken=[ \t]{0,8}(npm_[^\s\"']{1,512}|[A-Fa-f0-9-]{36})",
    r"sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}":
        r"(?<![A-Za-z0-9_-])sk-[A-Za-z0-9-_]{0,256}[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}",
    r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}": r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,4096}",
    r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}": r"pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,4096}",
    r"xox(?:a|b|p|o|s|r)-(?:\d+-)+[a-z0-9]+": r"xox(?:a|b|p|o|s|r)-(?:\d{1,32}-){1,8}[a-z0-9]{1,256}",
    '(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:(?:ibm)?[-_]?cos[-_]?(?:hmac)?|)(?:_|-|)(?:secret[-_]?(?:access)?[-_]?key)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-f0-9]{48}(?![a-f0-9]))(?:"|\\\'|)':
        '(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:(?:ibm)?[-_]?cos[-_]?(?:hmac)?|)(?:_|-|)(?:secret[-_]?(?:access)?[-_]?key)(?:"|\\\'|)(?:\\]|)(?: {0,8})(?:=|:|:=|=>| {1,8}|::)(?: {0,8})(?:"|\\\'|)([a-f0-9]{48}(?![a-f0-9]))(?:"|\\\'|)',
    # the secret part of a Slack webhook URL, not the host (see the webhook rules)
    r"https://hooks\.slack\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+":
        r"https://hooks\.slack\.com/services/(T[a-zA-Z0-9_]{1,64}/B[a-zA-Z0-9_]{1,64}/[a-zA-Z0-9_]{1,256})",
}
"""detect-secrets 1.5 regexes rewritten so that a match attempt reads a bounded window: the same
matches on real text, bounded quantifiers, and a lookbehind so a token is tried only where its
run of characters starts (``eyJ`` repeated 30,000 times no longer costs seconds)."""


EXTRA_FORMATS: tuple[SecretPattern, ...] = (
    # detect-secrets' JWT regex stops before the signature (its last part is lazy): take all three
    _p("json-web-token", r"(?<![A-Za-z0-9_=-])eyJ[A-Za-z0-9_\-]{8,4096}\.[A-Za-z0-9_\-]{4,4096}\.[A-Za-z0-9_\-]{0,4096}"),
    _p("anthropic-key", r"sk-ant-(?:api|admin)\d{2}-[A-Za-z0-9_\-]{20,4096}"),
    _p("openai-key", r"sk-(?<![A-Za-z0-9_]sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,4096}"),
    _p("huggingface-token", r"hf_[A-Za-z0-9]{30,4096}"),
    _p("github-token", r"github_pat_[A-Za-z0-9_]{22,4096}"),
    _p("github-token", r"gh[pousr]_[A-Za-z0-9]{30,4096}"),
    _p("slack-token", r"xapp-\d-[A-Z0-9]{1,64}-\d{1,32}-[a-z0-9]{1,256}"),
    _p("slack-token", r"xox[abposre]-[A-Za-z0-9-]{10,4096}"),
    _p("google-api-key", r"AIza[0-9A-Za-z_\-]{35}"),
    _p("stripe-key", r"(?:sk|rk)_(?:live|test)_(?<![A-Za-z0-9_][sr]k_live_)(?<![A-Za-z0-9_][sr]k_test_)[0-9a-zA-Z]{16,4096}"),
    _p("aws-access-key", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    _p("aws-secret-key", r"(?i)aws_?secret_?(?:access_?)?key[\"']?\s{0,8}[:=]\s{0,8}[\"']?([A-Za-z0-9/+=]{40})", 1,
       ("aws",)),
    _p("grafana-token", r"gl(?:sa|c|ft)_[A-Za-z0-9_+/=]{32,4096}"),
    _p("vault-token", r"hv[sbr]\.[A-Za-z0-9_\-]{24,4096}"),
    _p("digitalocean-token", r"do[por]_v1_[a-f0-9]{64}\b"),
    _p("shopify-token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b"),
    _p("linear-key", r"lin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    _p("doppler-token", r"dp\.(?:pt|st|ct|sa|scim|audit)\.[A-Za-z0-9]{40,44}\b"),
    _p("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"),
    _p("atlassian-token", r"ATATT3[A-Za-z0-9_\-=]{100,4096}"),
    _p("postman-key", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}\b"),
    _p("newrelic-key", r"NR(?:AK|AA|II)-[A-Z0-9]{27}\b"),
    _p("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?\b"),
    _p("pulumi-token", r"pul-(?<![A-Za-z0-9_]pul-)[a-f0-9]{40}\b"),
    _p("mailgun-key", r"key-(?<![A-Za-z0-9_]key-)[0-9a-zA-Z]{32}\b"),
    _p("npm-token", r"npm_[A-Za-z0-9]{36}\b"),
    _p("pypi-token", r"pypi-AgE[A-Za-z0-9_\-]{50,4096}"),
    _p("sendgrid-key", r"SG\.[A-Za-z0-9_\-]{16,4096}\.[A-Za-z0-9_\-]{16,4096}"),
    _p("square-token", r"sq0(?:atp|csp|idp)-[0-9A-Za-z\-_]{22,4096}"),
    _p("twilio-key", r"(?:SK|AC)(?<![A-Za-z0-9_]SK)(?<![A-Za-z0-9_]AC)[0-9a-f]{32}\b"),
    _p("gitlab-token", r"gl(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-[A-Za-z0-9_\-]{20,4096}"),
    _p("azure-storage-key", r"AccountKey=[A-Za-z0-9+/=]{40,4096}"),
    _p("telegram-bot-token", r"(?<![0-9])\d{8,10}:AA[0-9A-Za-z_\-]{33}\b", 0, (":aa",)),
)
"""Provider-documented formats detect-secrets 1.5 does not cover (or covers narrowly)."""

PRIVATE_KEY = SecretPattern("private-key", PRIVATE_KEY_REGEX)
"""Private key blocks, whole or cut (:mod:`exporter.secret_keys`)."""

_URL_END = r"[^\s\"'<>`]"
"""A character that can continue a URL (it ends at a space, a quote or a bracket)."""
_SCHEME = r"(?<![A-Za-z0-9+.\-])[A-Za-z][A-Za-z0-9+.\-]{0,31}://"
"""A URL's scheme, starting where a run of scheme characters starts (one attempt per run)."""
_NOT_A_COMMAND = "".join(f"(?<!{verb} )" for verb in (
    "create", "delete", "revoke", "describe", "renew", "lookup", "rotate", "generate", "new", "list"))
"""``kubectl create token NAME``, ``vault token lookup``: ``token`` names a command there, and
the word after it (a service account) is not a token value."""

URL_RULES: tuple[SecretPattern, ...] = (
    _p("url-password", _SCHEME + r"[^/\s:@\"'<>]{0,256}:([^/\s@\"'<>]{1,256})@", 1, ("://",)),
    _p("url-key", _SCHEME + r"([A-Za-z0-9_\-]{16,256})@", 1, ("://",)),
    _p("url-query-secret",
       r"(?i)[?&](?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|token|secret|password|"
       r"passwd|key|sig|signature|code|client[_-]?secret|private[_-]?token|routing[_-]?key|"
       r"integration[_-]?key)=([^&\s\"'<>#`]{6,4096})", 1, ("?", "&")),
    # a receiver's webhook URL: the host and the route to the hook stay, the credential part goes
    _p("webhook", r"https?://hooks\.slack\.com/(?:(?:services|workflows|triggers)/)?"
       rf"([A-Za-z0-9_]{{1,64}}/{_URL_END}{{1,256}})", 1),
    _p("webhook", r"https?://(?:[A-Za-z0-9-]{1,63}\.)?discord(?:app)?\.com/api/webhooks/"
       rf"({_URL_END}{{1,256}})", 1),
    _p("webhook", r"https?://[A-Za-z0-9.-]{0,253}(?:webhook\.office\.com|outlook\.office(?:365)?\.com)"
       rf"/webhook(?:b2)?/({_URL_END}{{1,512}})", 1),
    _p("webhook", r"https?://events\.(?:eu\.)?pagerduty\.com/(?:integration|x-ere)/([0-9A-Za-z]{20,64})", 1),
    _p("webhook", rf"https?://[^\s\"'<>`/]{{1,253}}(?:/[^\s\"'<>`/]{{1,256}}){{0,16}}/hooks/"
       rf"([A-Za-z0-9_\-]{{8,256}}{_URL_END}{{0,512}})", 1),
    _p("bearer", rf"(?i)(?<![A-Za-z0-9_])(?:bearer|{_NOT_A_COMMAND}token)\s{{1,8}}"
       r"((?=[A-Za-z0-9._~+/=\-]{0,4095}\d)[A-Za-z0-9._~+/=\-]{16,4096})", 1, ("bearer", "token")),
    _p("basic-auth", r"(?i)(?<![A-Za-z0-9_])basic\s{1,8}((?=[A-Za-z0-9+/]{0,4095}\d)[A-Za-z0-9+/]{12,4096}={0,2})",
       1, ("basic",)),
    # RFC 5321 section 4.5.3.1: a local part of at most 64 octets, labels of at most 63
    _p("email", r"(?<![A-Za-z0-9._%+\-])[A-Za-z0-9._%+\-]{1,64}@[A-Za-z0-9\-]{1,63}"
       r"(?:\.[A-Za-z0-9\-]{1,63}){0,8}\.[A-Za-z]{2,24}\b", 0, ("@",)),
)

CLI_RULES: tuple[SecretPattern, ...] = (
    _p("cli-password", r"(?:^|\s)(?:-u|--user)[ =][^\s:]{1,256}:(\S{1,256})", 1, ("-u", "--user")),
    _p("cli-password", r"(?i)--(?:password|passwd|pass|token|api[-_]?key|secret|client[-_]secret|"
       r"auth[-_]token|access[-_]key|secret[-_]key|private[-_]key)(?:=|\s{1,8})"
       r"([^\s\"']{1,1024}|\"[^\"]{0,1024}\"|'[^']{0,1024}')", 1, ("--",)),
    _p("cli-password", r"\bmysql(?:dump|admin|sh)?\b[^\n]{0,512}?\s-p([^\s-]\S{0,256})", 1, ("mysql",)),
    _p("bearer", r"(?i)\b(?:geniekey|sso-key|apikey|api-key)\s{1,8}([A-Za-z0-9._~+/=\-]{16,4096})", 1,
       ("geniekey", "sso-key", "apikey", "api-key")),
    _p("webhook", r"/integrations/v1/[A-Za-z0-9_-]{1,64}/([A-Za-z0-9]{16,256})", 1, ("/integrations/",)),
)
"""Secrets on command lines (curl -u, --password, mysql -p), API key schemes, and webhook
URLs whose path ends in the credential (Grafana OnCall)."""


def entropy_detectors():
    """detect-secrets' high-entropy string detectors: ``(base64, hex)`` (their Shannon entropy measures)."""
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )

    return Base64HighEntropyString(), HexHighEntropyString()


def builtin_formats() -> tuple[SecretPattern, ...]:
    """Every built-in format rule, in the order they are tried: private keys, the provider
    formats, detect-secrets' detectors, URL credentials, command-line secrets."""
    return (PRIVATE_KEY, *EXTRA_FORMATS, *detect_secrets_formats(), *URL_RULES, *CLI_RULES)


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


