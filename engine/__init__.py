"""Where the heavy commands' grades run: this machine's process pool, or a Ray cluster.

``record-reference``, ``gate``, ``import-harbor`` and the mutation analysis take an
:class:`~engine.local.Engine` and change by that parameter only: the local engine
(:mod:`engine.local`) is the process pool they always had; ``--ray ADDRESS`` (or
``RAY_ADDRESS``) gives :class:`~engine.ray_engine.RayEngine`, whose workers grade
and return results while this process (the driver) writes every run.
"""

from __future__ import annotations

import os

from engine.local import Engine, LocalEngine

__all__ = ["Engine", "LocalEngine", "engine_for"]


def engine_for(address: str | None) -> Engine:
    """The engine ``--ray ADDRESS`` asks for: a connected, checked
    :class:`~engine.ray_engine.RayEngine` for an address (else ``RAY_ADDRESS``), the
    :class:`LocalEngine` when neither is given.

    Raises:
        contract.errors.ClusterFailure: nothing listens at the address, it is no Ray head, or
            a worker node fails the start-up check (never a silent fallback to local).
    """
    address = address or os.environ.get("RAY_ADDRESS") or None
    if not address:
        return LocalEngine()
    from engine.ray_engine import RayEngine

    return RayEngine.connect(address)
