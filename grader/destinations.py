"""Where a receiver sends: its integrations compared with the ones a task's spec names, as
effective values after Alertmanager's defaults.

A receiver's integrations are its non-empty ``<kind>_configs`` lists (``webhook_configs``,
``pagerduty_configs``, ...). A spec names, per kind, the entries a receiver must have and
the fields judged in each (``url``, ``send_resolved``, ...); other fields are not judged. A
field the agent left out takes Alertmanager's default: ``send_resolved`` per integration kind
as ``config/notifiers.go`` ``Default<Kind>Config`` sets it (true for webhook, PagerDuty,
Opsgenie, VictorOps, Pushover, SNS, Telegram, Discord, Webex, MS Teams; false for email,
Slack, WeChat). URLs are compared as exact strings after YAML parsing.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

SEND_RESOLVED_DEFAULT = {
    "webhook_configs": True, "pagerduty_configs": True, "opsgenie_configs": True,
    "victorops_configs": True, "pushover_configs": True, "sns_configs": True,
    "telegram_configs": True, "discord_configs": True, "webex_configs": True,
    "msteams_configs": True, "msteamsv2_configs": True, "jira_configs": True,
    "rocketchat_configs": True, "email_configs": False, "slack_configs": False,
    "wechat_configs": False,
}
"""``send_resolved`` when a config leaves it out (Alertmanager ``config/notifiers.go``)."""


def integrations_of(receiver: Mapping) -> dict[str, list[Mapping]]:
    """``kind -> entries`` of a receiver's non-empty ``*_configs`` lists (entries that are not
    mappings are kept as they are, so they count and never match)."""
    return {str(key): [entry for entry in value if entry]
            for key, value in receiver.items()
            if str(key).endswith("_configs") and isinstance(value, list) and any(value)}


def effective(kind: str, entry: object, field: str) -> object:
    """The value Alertmanager uses for ``field`` of one ``kind`` entry: as written, or its
    default (only ``send_resolved`` has one here; others are None when absent)."""
    if not isinstance(entry, Mapping):
        return None
    if field in entry and entry[field] is not None:
        return entry[field]
    if field == "send_resolved":
        return SEND_RESOLVED_DEFAULT.get(kind)
    return None


def mask_url(value: object) -> str:
    """A URL for a message, its userinfo password and query values masked (``***``); the
    exporter's redactor masks whatever else looks secret when a grade is published."""
    text = str(value)
    try:
        parts = urlsplit(text)
    except ValueError:
        return text
    netloc = parts.netloc
    if parts.password:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = "&".join(f"{pair.partition('=')[0]}=***" if "=" in pair else pair
                     for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def describe(kind: str, entry: object, fields: list[str]) -> str:
    """``webhook url=http://... send_resolved=true`` for a message (URLs masked)."""
    words = [kind.removesuffix("_configs")]
    for field in fields:
        value = effective(kind, entry, field)
        shown = mask_url(value) if field.endswith("url") and value is not None else value
        words.append(f"{field}={str(shown).lower() if isinstance(value, bool) else shown}")
    return " ".join(words)


def destination_mismatches(receiver: Mapping, expected: Mapping[str, list[Mapping]]) -> list[str]:
    """What differs between a receiver's integrations and ``expected`` (``kind -> entries``
    with the judged fields and values); empty when it sends exactly where the spec says.

    Every expected entry must be met by a distinct entry of the same kind whose judged fields
    have the expected effective values; any integration kind or entry beyond the expected
    ones is a mismatch too (a second integration also pages somewhere else)."""
    got = integrations_of(receiver)
    problems = []
    for kind, entries in expected.items():
        left = list(got.get(kind, []))
        for want in entries:
            fields = list(want)
            match = next((e for e in left if all(effective(kind, e, f) == want[f] for f in fields)),
                         None)
            if match is not None:
                left.remove(match)
                continue
            closest = describe(kind, left[0], fields) if left else "none"
            problems.append(f"expected {describe(kind, want, fields)}; got {closest}")
            if left:
                left.pop(0)
        problems += [f"unexpected {describe(kind, extra, list(entries[0]) if entries else [])}"
                     for extra in left]
    for kind, entries in got.items():
        if kind not in expected:
            problems += [f"unexpected {kind.removesuffix('_configs')} integration" for _ in entries]
    return problems
