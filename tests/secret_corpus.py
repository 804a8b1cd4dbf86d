"""A corpus of secrets in provider-documented formats, and look-alikes that must survive.

Every value is made up (random characters in the documented shape), none is a real
credential. ``SECRETS`` maps a kind to ``(text placed in the input, the secret part that must
not reach a site)``; ``LOOK_ALIKES`` are strings the site must show unchanged.
"""

from __future__ import annotations

A = "Zq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gE"  # 32 mixed characters
H = "9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # 32 hex
H64 = H + "a1b2c3d4e5f60718293a4b5c6d7e8f90"

SECRETS: dict[str, tuple[str, str]] = {
    "aws-access-key-id": ("AKIAQZ3VN8XK2MT7PR4S", "AKIAQZ3VN8XK2MT7PR4S"),
    "aws-secret-access-key": ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq3vN8xK2m",
                              "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq3vN8xK2m"),
    "github-classic-pat": ("ghp_" + A + "Xy12", "ghp_" + A + "Xy12"),
    "github-fine-grained-pat": ("github_pat_11ABCDEFG0" + A + "_" + A + A[:18],
                                "github_pat_11ABCDEFG0" + A),
    "github-oauth": ("gho_" + A + "Ab34", "gho_" + A + "Ab34"),
    "gitlab-pat": ("glpat-" + A[:20], "glpat-" + A[:20]),
    "slack-bot-token": ("xoxb-123456789012-1234567890123-" + A[:24], "xoxb-123456789012-1234567890123-" + A[:24]),
    "slack-user-token": ("xoxp-123456789012-123456789012-123456789012-" + H, "xoxp-123456789012-123456789012"),
    "slack-webhook": ("https://hooks.slack.com/services/T0123ABCD/B0456EFGH/" + A[:24], "/B0456EFGH/" + A[:24]),
    "discord-webhook": ("https://discord.com/api/webhooks/112233445566778899/" + A + A, "112233445566778899/" + A),
    "discord-bot-token": ("MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl." + A[:27], "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl"),
    "openai-project-key": ("sk-proj-" + A + A[:16] + "T3BlbkFJ" + A[:20], "sk-proj-" + A),
    "anthropic-key": ("sk-ant-api03-" + A + A + A[:20] + "-AA", "sk-ant-api03-" + A),
    "huggingface-token": ("hf_" + A[:34], "hf_" + A[:34]),
    "stripe-live-secret": ("sk_live_" + A[:24], "sk_live_" + A[:24]),
    "stripe-restricted": ("rk_live_" + A[:24], "rk_live_" + A[:24]),
    "google-api-key": ("AIzaSy" + A + "abc", "AIzaSy" + A),
    "sendgrid-key": ("SG." + A[:22] + "." + A + A[:11], "SG." + A[:22]),
    "twilio-api-key": ("SK" + H, "SK" + H),
    "npm-token": ("npm_" + A + "abcd", "npm_" + A),
    "pypi-token": ("pypi-AgEIcHlwaS5vcmc" + A + A + A[:10], "pypi-AgEIcHlwaS5vcmc" + A),
    "jwt": ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0." + A,
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0"),
    "rsa-private-key": ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA" + A + "\n" + A + A
                        + "\n-----END RSA PRIVATE KEY-----", "MIIEpAIBAAKCAQEA" + A),
    "openssh-private-key": ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA" + A
                            + "\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAAA" + A),
    "mailchimp-key": (H + "-us12", H + "-us12"),
    "telegram-bot-token": ("bot_token: 1234567890:AA" + A[:33], "1234567890:AA" + A[:33]),
    "square-secret": ("sq0csp-" + A + A[:11], "sq0csp-" + A),
    "azure-storage-key": ("DefaultEndpointsProtocol=https;AccountName=x;AccountKey=" + (A * 3)[:86] + "==",
                          "AccountKey=" + (A * 3)[:40]),
    "pagerduty-routing-key": ("routing_key: " + H, H),
    "pagerduty-service-key": ("service_key: '" + H[::-1] + "'", H[::-1]),
    "opsgenie-api-key": ("api_key: 3c9a1b2e-4d5f-6a7b-8c9d-0e1f2a3b4c5d", "3c9a1b2e-4d5f-6a7b-8c9d-0e1f2a3b4c5d"),
    "smtp-auth-password": ("smtp_auth_password: Pa55w0rd-Hunter2!", "Pa55w0rd-Hunter2!"),
    "basic-auth-password": ("basic_auth:\n  username: am\n  password: s3cr3t-Basic-Pw", "s3cr3t-Basic-Pw"),
    "bearer-token-field": ("bearer_token: " + A, A),
    "authorization-credentials": ("authorization:\n  type: Bearer\n  credentials: cr3d-" + A[:20], "cr3d-" + A[:20]),
    "url-password": ("https://alert:Sup3rS3cret@am.example.net/api/v2/alerts", "Sup3rS3cret"),
    "bearer-header": ("Authorization: Bearer " + A + "9", A + "9"),
    "shopify-token": ("shpat_" + H, "shpat_" + H),
    "digitalocean-token": ("dop_v1_" + H64, "dop_v1_" + H64),
    "vault-token": ("hvs.CAESI" + A, "hvs.CAESI" + A),
    "grafana-service-account": ("glsa_" + A + "_" + H[:8], "glsa_" + A),
    "linear-key": ("lin_api_" + A + "12345678", "lin_api_" + A),
    "doppler-token": ("dp.pt." + A + "1234567890a", "dp.pt." + A),
    "age-secret-key": ("AGE-SECRET-KEY-1" + ("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L" * 2)[:58], "AGE-SECRET-KEY-1QPZRY9X8GF2TVDW0S3JN54"),
    "postman-key": ("PMAK-" + H[:24] + "-" + H + "ab", "PMAK-" + H[:24]),
    "newrelic-key": ("NRAK-" + "Q3VN8XK2MT7PR4SW9YB6CF1HJ5D", "NRAK-Q3VN8XK2MT7PR4SW9YB6CF1HJ5D"),
    "databricks-token": ("dapi" + H, "dapi" + H),
    "mailgun-key": ("key-" + A, "key-" + A),
    "sentry-dsn": ("https://" + H + "@o123456.ingest.sentry.io/7654321", H),
    "teams-webhook": ("https://contoso.webhook.office.com/webhookb2/" + H + "@" + H + "/IncomingWebhook/" + A,
                      "/IncomingWebhook/" + A),
    "url-query-token": ("https://api.telegram.example/alert?chat=1&token=" + A, A),
    "victorops-api-key": ("victorops_configs:\n- api_key: vo-" + A, "vo-" + A),
    "pushover-user-key": ("user_key: u" + A[:29], "u" + A[:29]),
    "wechat-api-secret": ("api_secret: " + A, A),
    "sns-secret-key": ("sigv4:\n  access_key: AKIAX" + "Q3VN8XK2MT7PR4S\n  secret_key: " + A + "/abc",
                       A + "/abc"),
    "env-datadog-key": ("DD_API_KEY=" + H, H),
    "webex-credentials": ("credentials: wbx-" + A, "wbx-" + A),
}
"""At least 30 kinds; each text is written into a file, a tool argument, an output, a
message, a run id, a task id and a file name by the corpus test."""

LOOK_ALIKES: list[str] = [
    "95beedce1c2a4b040c5f47da30dabac7c83ba43ac9ba05c85567045658aaa0af",
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  tests/spec.json",
    "3f2a9c1e-7b4d-4e8a-9f0c-1d2e3f4a5b6c",
    "episode 3f2a9c1e-7b4d-4e8a-9f0c-1d2e3f4a5b6c finished",
    "call_0001",
    "toolu_01A09q90qw90lq917835lq9",
    "call_aB3dE5fG7hI9jK1lM3nO5pQ7",
    "source_commit 230f8d5e9b1a4c7d2e8f6a3b5c9d1e7f4a2b8c6d",
    "230f8d5",
    ('sum by (service) (rate(http_requests_total{code=~"5.."}[5m])) / '
     "sum by (service) (rate(http_requests_total[5m])) > 14.4 * 0.001"),
    "rate(auth_token_requests_total[5m]) > 0",
    "routing_key_file: /etc/alertmanager/pagerduty.key",
    "api_key: <secret>",
    "password: ${SMTP_PASSWORD}",
    "A1.fire.outage@86m",
    "af-001-slo-onboarding-easy-s1__oracle__s0",
    '"max_tokens": 512, "prompt_tokens": 1234',
    '{"task_checksum": "9f8e7d6c5b4a39281706f5e4d3c2b1a0a1b2c3d4e5f60718293a4b5c6d7e8f90"}',
    "image sha256:9f8e7d6c5b4a39281706f5e4d3c2b1a0a1b2c3d4e5f60718293a4b5c6d7e8f90",
    '{"fingerprint": "95beedce1c2a4b040c5f47da30dabac7c83ba43ac9ba05c85567045658aaa0af"}',
    '{"episode_id": "3f2a9c1e-7b4d-4e8a-9f0c-1d2e3f4a5b6c", "session_id": "af-001__nop__s0"}',
    "http://alertmanager:9093/api/v2/alerts",
    "chat-gw-7f9c8d6b5-x2k4q",
    'grpc_server_handled_total{grpc_code="Unavailable",pod="chat-gw-0"}',
    "2026-12-01T10:20:15Z",
    "the bearer of this ticket, and basic authentication with tokens",
    "receiver: chat-oncall-pager",
    "send_resolved: true",
    '"tool_call_id": "call_Zq3vN8xK2mT7pR4sW9yB6cF1"',
    "secret_name: db-credentials",
    "token_count: 17",
    "task-run skip disk-usage risk-score",
]
"""At least 20 strings a site must show unchanged."""

FIELD_FORMS: dict[str, tuple[str, str]] = {
    "yaml-block-scalar": ("    routing_key: |\n      R7kq2ZpX9mW4vT8nL3bY6cH1dF5gJ0sA\n", "R7kq2ZpX9mW4vT8nL3bY6cH1dF5gJ0sA"),
    "yaml-folded-scalar": ("      password: >-\n        Fold3d-Pa55word-Qz8\n", "Fold3d-Pa55word-Qz8"),
    "yaml-value-on-next-line": ("      password:\n        NextL1ne-Pa55word-Wx4\n", "NextL1ne-Pa55word-Wx4"),
    "yaml-tag": ("    smtp_auth_password: !!str T4gged-Pa55word-Kp2\n", "T4gged-Pa55word-Kp2"),
    "yaml-anchor": ("    service_key: &pdkey Anch0red-ServiceKey-Vb7\n", "Anch0red-ServiceKey-Vb7"),
    "http-headers-secrets-list": ("    http_headers:\n      X-Api-Key:\n        secrets: [H3aderS3cret-Lm5Rt8Qw]\n",
                                  "H3aderS3cret-Lm5Rt8Qw"),
    "http-headers-secrets-block": ("    http_headers:\n      X-Api-Key:\n        secrets:\n        - Bl0ckS3cret-Lm5Rt8Qw\n",
                                   "Bl0ckS3cret-Lm5Rt8Qw"),
    "grafana-oncall-url": (("  - url: https://oncall-prod-us-central-0.grafana.net/oncall/integrations/v1/"
                           "alertmanager/Zt8Kq3Vn5Rx2Wm7Py4Lb9Hc6D/\n"), "Zt8Kq3Vn5Rx2Wm7Py4Lb9Hc6D"),
    "curl-user-password": ("curl -u admin:Curl-Pa55word-Jh3 http://alertmanager:9093/api/v2/silences",
                           "Curl-Pa55word-Jh3"),
    "env-pgpassword": ("PGPASSWORD=Pg-Pa55word-Nm6 psql -h db -U alerts", "Pg-Pa55word-Nm6"),
    "cli-password-flag": ("amtool silence add --password Flag-Pa55word-Tr9", "Flag-Pa55word-Tr9"),
    "mysql-p": ("mysql -uroot -pMysqlPa55wordGh4 -e 'select 1'", "MysqlPa55wordGh4"),
    "escaped-json": ('{"body": "{\\"smtp_auth_password\\": \\"Esc-Pa55word-Yu1\\"}"}', "Esc-Pa55word-Yu1"),
    "toml-triple-quoted": ('smtp_auth_password = """Toml-Pa55word-Io3"""', "Toml-Pa55word-Io3"),
    "opsgenie-geniekey-header": (("curl -H 'Authorization: GenieKey 7c1e2f3a-9b8d-4c5e-a6f7-0d1e2f3a4b5c' "
                                 "https://api.opsgenie.com/v2/alerts"), "7c1e2f3a-9b8d-4c5e-a6f7-0d1e2f3a4b5c"),
    "numeric-password": ("    smtp_auth_password: '90817263'\n", "90817263"),
    "yaml-explicit-key": ("    ? smtp_auth_password\n    : Expl1cit-Pa55word-Ze8\n", "Expl1cit-Pa55word-Ze8"),
}
"""The forms a secret field takes in configs and on command lines (found by a review of the
redactor); each is placed like the kinds above."""
SECRETS.update(FIELD_FORMS)

LOOK_ALIKES += [
    '{"sha": "230f8d5e9b1a4c7d2e8f6a3b5c9d1e7f4a2b8c6d", "message": "fix routing"}',
    '{"commit_sha": "230f8d5e9b1a4c7d2e8f6a3b5c9d1e7f4a2b8c6d"}',
    "sha256 of rules/a.yml is 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'",
    "    routing_key: {{ .Values.pagerduty.routingKey }}",
    "Reset the password: it expired yesterday, see the runbook",
    'dashboard uid "a1B2c3D4e5F6g7H8i9J0kLmN" shows the burn',
    'sum by (tenant_key) (rate(http_requests_total{tenant_key="acme",code=~"5.."}[5m]))',
    'rate(auth_requests_total{token="expired"}[5m]) > 1',
    "dashboards/JvmGcPauseP99AboveBudgetQ4.json",
]
