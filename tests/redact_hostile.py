"""Hostile inputs for the redactor by kind of fault (issue 33 item 2), generated from kinds, not
hand-picked: wrapped encodings, altered private key blocks, pathological strings for every
pattern family, and look-alikes that must stay readable. Every secret is made up.

``WRAPPED`` and ``KEYS`` are ``(id, text, secret parts, kept parts)``: no secret part may reach
the output, every kept part must.
"""

from __future__ import annotations

import base64
import json
import textwrap

TOKEN = "ghp_" + "Zq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gEaB12"
AWS = "AKIA" + "Q3VN8XK2MT7PR4SW"
SLACK = "xoxb-123456789012-1234567890123-" + "Zq3vN8xK2mT7pR4sW9yB6cF1"
STRIPE = "sk_live_" + "Zq3vN8xK2mT7pR4sW9yB6cF1"
PASSWORD = "smtp_auth_password: Wr4pped-Pa55word-Qz8"
PAYLOADS = {
    "github": f"apiVersion: v1\nkind: Secret\ndata:\n  token: {TOKEN}\n",
    "aws": f'{{"AccessKeyId": "{AWS}", "Region": "eu-west-1"}}',
    "slack": f"SLACK_TOKEN={SLACK} ./notify.sh --channel alerts",
    "stripe": f"STRIPE={STRIPE}",
    "field": f"global:\n  {PASSWORD}\n  smtp_from: am@example.net\n",
}
"""Texts carrying a secret, to be encoded and wrapped; each holds its secret in full."""
SECRET_OF = {"github": TOKEN, "aws": AWS, "slack": SLACK, "stripe": STRIPE, "field": "Wr4pped-Pa55word-Qz8"}

BEFORE, AFTER = "before: keep this line", "after: keep this one too"


def _lines(block: str, width: int) -> list[str]:
    return textwrap.wrap(block, width, break_on_hyphens=False)


WRAPS = {
    "mime-76": lambda b: "\n".join(_lines(b, 76)),
    "pem-64": lambda b: "\n".join(_lines(b, 64)),
    "indented": lambda b: "secret_blob:\n" + "\n".join("    " + line for line in _lines(b, 40)),
    "backslash": lambda b: "echo " + " \\\n  ".join(_lines(b, 36)) + " | base64 -d",
    "tight-backslash": lambda b: "printf %s " + "\\\n".join(_lines(b, 48)),
    "json-concat": lambda b: 'const blob = "' + '" +\n  "'.join(_lines(b, 32)) + '";',
    "python-implicit": lambda b: "blob = (\n" + "\n".join(f'    "{line}"' for line in _lines(b, 44)) + "\n)",
    "yaml-folded": lambda b: "blob: >-\n" + "\n".join("  " + line for line in _lines(b, 60)),
    "yaml-literal-item": lambda b: "items:\n  - |\n" + "\n".join("    " + line for line in _lines(b, 52)),
    "json-array": lambda b: '{"chunks": [\n' + ",\n".join(f'  "{line}"' for line in _lines(b, 40)) + "\n]}",
}
"""How a tool wraps an encoded block over lines."""

ENCODERS = {
    "base64": lambda text: base64.b64encode(text.encode()).decode(),
    "base64url": lambda text: base64.urlsafe_b64encode(text.encode()).decode().rstrip("="),
    "hex": lambda text: text.encode().hex(),
}


def wrapped_inputs() -> list[tuple[str, str, list[str], list[str]]]:
    """Every payload in every encoding and wrap, between two ordinary lines: the secret parts
    are the secret and every wrapped line of the block (none may survive alone)."""
    cases = []
    for payload, text in PAYLOADS.items():
        for encoding, encode in ENCODERS.items():
            block = encode(text)
            for wrap, style in WRAPS.items():
                wrapped = style(block)
                pieces = [p for p in _lines(block, 32) if len(p) >= 12]
                cases.append((f"{payload}-{encoding}-{wrap}", f"{BEFORE}\n{wrapped}\n{AFTER}",
                              [SECRET_OF[payload], *pieces], [BEFORE, AFTER]))
    return cases


KEY_LINES = [
    "MIIEpAIBAAKCAQEAq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gEZq3vN8xK2mT7pR4sW",
    "9yB6cF1hJ5dL0gEZq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gEZq3vN8xK2mT7pR4sX",
    "Tq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gEZq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gY",
    "Uq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gE==",
]
LABELS = ["RSA PRIVATE KEY", "EC PRIVATE KEY", "PRIVATE KEY", "ENCRYPTED PRIVATE KEY",
          "OPENSSH PRIVATE KEY", "PGP PRIVATE KEY BLOCK", "DSA PRIVATE KEY"]
OUTPUT_AFTER = "$ kubectl get pods -n monitoring\nalertmanager-main-0   2/2   Running"
"""Ordinary output after a key: it must survive, also after a cut key."""


def _block(label: str, lines: list[str], *, end: bool = True, case=str, headers: list[str] = ()) -> list[str]:
    out = [case(f"-----BEGIN {label}-----"), *headers, *lines]
    return out + [case(f"-----END {label}-----")] if end else out


def _numbered(lines: list[str], style: str) -> str:
    if style == "cat":
        return "".join(f"{i:6d}\t{line}\n" for i, line in enumerate(lines, 1))
    return "".join(f"{i}:{line}\n" for i, line in enumerate(lines, 1))


ALTERATIONS = {
    "escaped-json": lambda label, end: json.dumps({"key": "\n".join(_block(label, KEY_LINES, end=end)) + "\n"}),
    "escaped-twice": lambda label, end: json.dumps(
        {"body": json.dumps({"key": "\n".join(_block(label, KEY_LINES, end=end))})}),
    "yaml-escaped": lambda label, end: 'tls_key: "' + "\\n".join(_block(label, KEY_LINES, end=end)) + '"',
    "blank-line": lambda label, end: "\n".join(_block(label, ["", *KEY_LINES], end=end)),
    "proc-type": lambda label, end: "\n".join(_block(
        label, KEY_LINES, end=end, headers=["Proc-Type: 4,ENCRYPTED", "DEK-Info: AES-128-CBC,9F8E7D6C5B4A3928", ""])),
    "cat-n": lambda label, end: _numbered(_block(label, KEY_LINES, end=end), "cat"),
    "grep-n": lambda label, end: _numbered(_block(label, KEY_LINES, end=end), "grep"),
    "lowercase": lambda label, end: "\n".join(_block(label, KEY_LINES, end=end, case=str.lower)),
    "odd-case": lambda label, end: "\n".join(_block(label, KEY_LINES, end=end, case=str.title)),
    "yaml-block": lambda label, end: "tls.key: |\n" + "\n".join("  " + line for line in _block(label, KEY_LINES, end=end)),
    "crlf": lambda label, end: "\r\n".join(_block(label, KEY_LINES, end=end)),
    "flat": lambda label, end: " ".join(_block(label, KEY_LINES, end=end)),
}
"""How a private key block is altered on its way into a transcript."""


def key_inputs() -> list[tuple[str, str, list[str], list[str]]]:
    """Every label and alteration, whole and cut (no END line), followed by ordinary output."""
    cases = []
    for label in LABELS:
        for name, alter in ALTERATIONS.items():
            for end in (True, False):
                text = f"$ cat key.pem\n{alter(label, end)}\n{OUTPUT_AFTER}"
                cases.append((f"{label.split()[0].lower()}-{name}-{'whole' if end else 'cut'}", text,
                              [line[:24] for line in KEY_LINES], ["$ cat key.pem", *OUTPUT_AFTER.split("\n")]))
    return cases


N = 100_000
PATHOLOGICAL = {
    "email": ["a." * (N // 2) + "@", "a" * N + "@x", "@a-" * (N // 3), "x@" + "a." * (N // 2)],
    "url": ["a://" * (N // 4), "http://" + "a:" * (N // 2), "https://x/" + "a/" * (N // 2) + "hooks",
            "a." * (N // 2) + "://", "http://a/" * (N // 9), "?token=" * (N // 7)],
    "private-key": ["-----BEGIN RSA PRIVATE KEY-----\n" * (N // 32), "-----BEGIN PRIVATE KEY----- " * (N // 28),
                    "-" * N, "-----BEGIN RSA PRIVATE KEY-----\n" + ("A" * 64 + "\n") * (N // 65),
                    "PuTTY-User-Key-File-2" * (N // 21), "-----BEGIN " + "A " * (N // 2)],
    "token-formats": ["eyJ" * (N // 3), "sk-" * (N // 3) + "T3BlbkFJ", "//a" * (N // 3) + "/:_authToken=",
                      "xoxb-" + "1-" * (N // 2), "ghp_" * (N // 4), "AKIA" * (N // 4), "SG." * (N // 3),
                      "cos secret_key" + " " * N + "x"],
    "command-line": ["mysql " * (N // 6), "--password " * (N // 11), " -u x" * (N // 5), "bearer " * (N // 7),
                     "kubectl create token " * (N // 21)],
    "secret-fields": ["token" * (N // 5), "password=" * (N // 9), "token " * (N // 6), 'token: "' * (N // 8),
                      "password=${" * (N // 11), "a:\n" + "  password:\n" * (N // 12)],
    "encoded": ["A" * N, "ab" * (N // 2) + "g", ("QUJD" * 5 + "\n") * (N // 21), ("ab" * 10 + "\n") * (N // 21),
                "%4" * (N // 2), "x \\\n" * (N // 4), ("QUJDREVGR0hJSktMTU5PUA" + '" +\n"') * (N // 27)],
    "quoted": ['"' + "a" * N, '"\\' * (N // 2), '"\\"' * (N // 3), ('"' + "a" * 30 + "'") * (N // 32),
               "'" * N, '"' * N],
}
"""Strings of about 100 kB that made a backtracking regex (or a loop around one) quadratic:
a prefix repeated, a run that almost matches, separators that never close."""

RECEIVERS = [
    ("https://hooks.slack.com/services/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",
     "https://hooks.slack.com/services/", "Zq3vN8xK2mT7pR4sW9yB6cF1"),
    ("https://discord.com/api/webhooks/112233445566778899/Zq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gE",
     "https://discord.com/api/webhooks/", "Zq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gE"),
    ("https://contoso.webhook.office.com/webhookb2/9f8e7d6c@9f8e7d6c/IncomingWebhook/Zq3vN8xK2mT7pR4sW9yB6cF1",
     "https://contoso.webhook.office.com/webhookb2/", "Zq3vN8xK2mT7pR4sW9yB6cF1"),
    ("https://events.pagerduty.com/integration/9f8e7d6c5b4a39281706f5e4d3c2b1a0/enqueue",
     "https://events.pagerduty.com/integration/", "9f8e7d6c5b4a39281706f5e4d3c2b1a0"),
    ("https://api.opsgenie.com/v1/json/alertmanager?apiKey=7c1e2f3a-9b8d-4c5e-a6f7-0d1e2f3a4b5c",
     "https://api.opsgenie.com/v1/json/alertmanager?apiKey=", "7c1e2f3a-9b8d-4c5e-a6f7-0d1e2f3a4b5c"),
    ("https://am:Sup3rS3cretPw@alertmanager.example.net:9093/api/v2/alerts",
     "@alertmanager.example.net:9093/api/v2/alerts", "Sup3rS3cretPw"),
    ("https://oncall.example.net/hooks/Zq3vN8xK2mT7pR4sW9yB6cF1", "https://oncall.example.net/hooks/",
     "Zq3vN8xK2mT7pR4sW9yB6cF1"),
    ("https://chat.example.net/api/alert?chat=1&routing_key=Zq3vN8xK2mT7pR4sW9yB6cF1",
     "https://chat.example.net/api/alert?chat=1&routing_key=", "Zq3vN8xK2mT7pR4sW9yB6cF1"),
]
"""``(receiver URL, the part that must stay readable, the secret part)``."""

RECEIVER_PLACES = [
    "- name: {name}\n  webhook_configs:\n  - url: {url}\n    send_resolved: true",
    "  slack_configs:\n  - api_url: '{url}'\n    channel: '#{name}'",
    '{{"receiver": "{name}", "url": "{url}"}}',
    "receiver {name} sends to {url} (expected team-payments)",
]
"""Where a receiver's URL sits: Alertmanager YAML, JSON, a check's cause."""

PROSE = [
    "The deploy finished at noon and every alert cleared on its own.",
    "Checkout latency went back under budget after the rollback.",
    "Please page the payments team only for sustained errors.",
    "This route groups alerts by cluster and service, nothing else.",
    "The inhibit rule mutes warnings while a critical alert fires.",
    "Silence expires tomorrow morning, after the maintenance window.",
]
"""Ordinary sentences: quoted in base64 they are not secrets."""

LOOK_ALIKES = [
    *[f'{place}"{base64.b64encode(text.encode()).decode()}"' for text in PROSE
      for place in ("message: ", '{"note": ', "annotation = ")],
    "kubectl create token deploy-bot", "kubectl create token prometheus-k8s-operator",
    "kubectl create token alertmanager-main-0 -n monitoring",
    "kubectl -n monitoring create token grafana-agent-2026 --duration 24h",
    "TOKEN=$(kubectl create token deploy-bot-v2-canary)", "oc create token builder-sa-01-prod",
    "vault token lookup alerts-renewer-2026-x1", "kubectl delete token-reviewer-0123456789ab",
    "alert: TokenRefreshFailing", "alert: SecretRotationOverdue", "alert: PasswordResetErrorsHigh",
    "alertname=ApiKeyRotationLate", "alert: BearerTokenExpiringSoon2026", "- alert: CredentialsLeakDetectorDown",
    'ALERTS{alertname="TokenRefreshFailing", severity="page"}', "summary: Token refresh failing for 10m",
    "secret_type: tls", "  labels:\n    secret_type: tls\n    token_kind: refresh",
    "labels: {secret_type: tls, alertname: CertSecretExpiring}", 'secret_type="opaque"',
    "token_bucket_fill_rate: 0.5", "password_file: /etc/am/pw", "credentials_file: /run/secrets/slack",
    "routing_key_file: /run/secrets/pd", "url: https://hooks.slack.com/services", "api_url: https://api.opsgenie.com/",
    "url: https://events.pagerduty.com/v2/enqueue", "receiver: team-secrets-oncall",
]
"""Strings the site must show unchanged (kind 4: over-masking)."""
