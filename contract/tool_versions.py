"""The tool versions a grade names (grader -> recorder -> exporter): promtool, amtool, and
the Alertmanager whose inhibition semantics the grader follows."""

from __future__ import annotations

from contract.base import Strict


class ToolVersions(Strict):
    """The real tools behind a grade (grader/tools.py): promtool's and amtool's versions as
    they print them (``2.42.0+ds``), and whose inhibition semantics the simulator follows
    (``alertmanager 0.25``)."""

    promtool: str
    amtool: str
    inhibition: str
