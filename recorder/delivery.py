"""End-to-end delivery: the real Alertmanager server, run on a workspace's alertmanager.yml,
sends each page of a task's route checks; a sink on 127.0.0.1 records where it arrives.

Every webhook URL (``webhook_configs[].url``) and Slack URL (``slack_configs[].api_url``) of
every receiver is rewritten to a distinct path on the sink, so what arrives there names the
destination the config really sends to; ``group_wait`` and ``group_interval`` are shortened
to 200ms on every route (timing is the timing checks' to judge). The pages are posted one at a
time over ``/api/v2/alerts`` and resolved before the next, so one page's inhibition never
mutes another's. What each page reached is compared with what the destination checks expect
(:func:`expected_destinations`): the spec's destination for a receiver a requirement creates,
the pristine repo's receiver otherwise.
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

from recorder.alertmanager_server import AlertmanagerServer

REWRITTEN = {"webhook_configs": "url", "slack_configs": "api_url"}
"""The HTTP integrations whose URL is rewritten to the sink, and their URL field."""

MAX_BODY = 1 << 20
"""The largest notification the sink reads (bytes); Alertmanager's are a few kB."""


@dataclass(frozen=True)
class PageResult:
    """One page sent end to end: its ``labels``, the destinations it was ``expected`` at and
    those it ``reached`` (``kind url`` strings, sorted)."""

    labels: dict[str, str]
    expected: list[str]
    reached: list[str]

    @property
    def agrees(self) -> bool:
        """The page reached exactly the expected destinations."""
        return self.expected == self.reached


@dataclass
class _Sink:
    """Records the firing notifications posted to it: path -> list of alert label sets."""

    got: list[tuple[str, list[dict]]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def _handler(sink: _Sink):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
            body = self.rfile.read(length)
            try:
                doc = json.loads(body)
            except ValueError:
                doc = None
            if isinstance(doc, dict) and isinstance(doc.get("alerts"), list):  # a webhook
                alerts = [a.get("labels") or {} for a in doc["alerts"]
                          if isinstance(a, dict) and a.get("status") == "firing"]
            else:  # Slack's payload names no labels: the page posted just before is meant
                alerts = [] if b"RESOLVED" in body else [{}]
            if alerts:
                with sink.lock:
                    sink.got.append((self.path, alerts))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *args):  # quiet
            return

    return Handler


def rewrite(config: Mapping, sink_url: str) -> tuple[dict, dict[str, str]]:
    """``(config with every rewritten URL on the sink and timings shortened, sink path ->
    "kind url" of the original destination)``.

    The config is a stranger's: nothing in it may make the server reach past 127.0.0.1 or read
    the machine's files. Integrations of other kinds (e-mail, PagerDuty, ...) are dropped
    (they never count as reached), as are every ``http_config`` (a proxy), ``global`` and
    ``templates``."""
    doc = copy.deepcopy(dict(config))
    doc.pop("global", None)
    doc.pop("templates", None)
    paths: dict[str, str] = {}
    for receiver in doc.get("receivers") or []:
        if not isinstance(receiver, dict):
            continue
        for key in [k for k in receiver if str(k).endswith("_configs") and k not in REWRITTEN]:
            del receiver[key]
        for kind, key in REWRITTEN.items():
            if kind not in receiver:
                continue
            kept = [entry for entry in receiver.get(kind) or []  # a URL read from a file: dropped
                    if isinstance(entry, dict) and isinstance(entry.get(key), str) and entry[key]]
            for entry in kept:
                path = f"/d/{len(paths)}"
                paths[path] = f"{kind.removesuffix('_configs')} {entry[key]}"
                entry[key] = sink_url + path
                entry.pop("http_config", None)
                entry.pop(f"{key}_file", None)
            receiver[kind] = kept
    _shorten(doc.get("route") or {})
    return doc, paths


def _shorten(route: dict, root: bool = True) -> None:
    """``group_wait`` and ``group_interval`` 200ms on the root and wherever a route sets them."""
    for name in ("group_wait", "group_interval"):
        if root or name in route:
            route[name] = "200ms"
    for child in route.get("routes") or []:
        if isinstance(child, dict):
            _shorten(child, root=False)


def expected_destinations(receivers: list[str], spec: Mapping, pristine: Mapping) -> list[str]:
    """``kind url`` of every rewritten integration the ``receivers`` should send to: a route
    requirement's ``destination`` for the receiver it creates, else the pristine config's
    receiver of that name (sorted, duplicates dropped)."""
    by_spec = {r["receiver"]: r["destination"] for r in spec.get("requirements") or []
               if r.get("kind") == "route" and r.get("destination")}
    out = set()
    for name in receivers:
        integrations = by_spec.get(name) or next(
            (r for r in pristine.get("receivers") or [] if isinstance(r, dict)
             and r.get("name") == name), {})
        for kind, key in REWRITTEN.items():
            for entry in integrations.get(kind) or []:
                if isinstance(entry, dict) and entry.get(key):
                    out.add(f"{kind.removesuffix('_configs')} {entry[key]}")
    return sorted(out)


def deliver(config_path: Path, pages: list[tuple[dict[str, str], list[str]]], *,
            wait_s: float = 5.0, settle_s: float = 0.6) -> list[PageResult]:
    """Send each ``(labels, expected destinations)`` page through the real server running the
    config at ``config_path``; the :class:`PageResult` of each, in order.

    A page waits up to ``wait_s`` for its first notification, then ``settle_s`` for the rest.
    Raises :class:`recorder.alertmanager_server.AlertmanagerServerError` when the server does
    not start or answer (the config does not load, the binary is missing)."""
    sink = _Sink()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(sink))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        config = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
        doc, paths = rewrite(config, f"http://127.0.0.1:{server.server_address[1]}")
        with AlertmanagerServer(yaml.safe_dump(doc, sort_keys=False)) as am:
            return [_one_page(am, sink, paths, labels, expected, wait_s, settle_s)
                    for labels, expected in pages]
    finally:
        server.shutdown()
        server.server_close()


def _one_page(am: AlertmanagerServer, sink: _Sink, paths: dict[str, str], labels: dict,
              expected: list[str], wait_s: float, settle_s: float) -> PageResult:
    with sink.lock:
        sink.got.clear()
    am.post_alerts([labels])
    deadline, first = time.monotonic() + wait_s, None
    while time.monotonic() < (first + settle_s if first else deadline):
        with sink.lock:
            if sink.got and first is None:
                first = time.monotonic()
        time.sleep(0.05)
    with sink.lock:
        reached = sorted({paths.get(path, f"unknown {path}") for path, alerts in sink.got
                          if any(_same(a, labels) for a in alerts)})
    am.post_alerts([labels], hours=-0.01)  # resolved: it mutes nothing from here on
    time.sleep(0.2)
    return PageResult(dict(labels), sorted(expected), reached)


def _same(alert: Mapping, labels: Mapping) -> bool:
    """A notified alert is the page (Slack's, which carries no labels, counts as it)."""
    return not alert or all(alert.get(k) == v for k, v in labels.items())


def task_pages(task_dir: Path) -> list[tuple[dict[str, str], list[str]]]:
    """The pages a task's checks route, each with the destinations it must reach: every route
    requirement's positive label sets (``expect``: their receivers' destinations), or for a task
    with none, every Preservation timing check's page (where the pristine repo delivers it,
    resolved by amtool). Raises BadInput for an unreadable task file."""
    from contract.files import read_json
    from grader.routing import resolve_receivers

    spec = read_json(task_dir / "tests" / "spec.json")
    catalog = read_json(task_dir / "tests" / "checks.json")
    pristine_path = task_dir / "environment" / "monitoring" / "alertmanager" / "alertmanager.yml"
    pristine = yaml.safe_load(pristine_path.read_text(encoding="utf-8")) or {}
    pages = [(c["probe"]["labels"], expected_destinations(c["probe"]["expect"], spec, pristine))
             for c in catalog["checks"]
             if c["probe"]["type"] == "route" and "expect" in c["probe"]]
    if pages:
        return pages
    return [(c["probe"]["labels"],
             expected_destinations(resolve_receivers(pristine_path, c["probe"]["labels"]), spec,
                                   pristine))
            for c in catalog["checks"] if c["probe"]["type"] == "route_timing"]
