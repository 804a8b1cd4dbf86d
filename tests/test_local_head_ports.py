"""engine/local_head.py's port choice: the Ray head's named ports and its workers'
range never overlap (a CI run failed with `ray start`'s "port 51965 that is used by other
components": the gcs port, picked free by the kernel, had landed inside the workers' range)."""

from __future__ import annotations

import itertools

from engine.local_head import PORT_OPTIONS, WORKER_PORTS, pick_ports


def test_named_ports_avoid_the_worker_range_and_each_other():
    # the kernel's answers, made to collide: inside the range, repeated, then free ones
    answers = iter([51933, 51965, 51965, 51940, 51933, 51974, 51974, 51975, *range(52000, 52100)])
    ports, low = pick_ports(PORT_OPTIONS, pick=lambda: next(answers))
    assert low == 51933
    workers = set(range(low, low + WORKER_PORTS))
    assert not workers & set(ports.values())
    assert len(set(ports.values())) == len(PORT_OPTIONS)
    assert ports[PORT_OPTIONS[0]] == 51974 and ports[PORT_OPTIONS[1]] == 51975


def test_the_worker_range_stays_below_65536():
    answers = itertools.chain([65530, 65500, 65495], itertools.count(40000))
    _, low = pick_ports(("port",), pick=lambda: next(answers))
    assert low == 65495 and low + WORKER_PORTS - 1 == 65535


def test_real_picks_are_distinct_and_outside_the_range():
    for _ in range(20):
        ports, low = pick_ports(PORT_OPTIONS)
        assert not set(range(low, low + WORKER_PORTS)) & set(ports.values())
        assert len(set(ports.values())) == len(PORT_OPTIONS)
