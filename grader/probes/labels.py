"""Label sets as check details print them: ``{k=v, ...}`` in key order."""

from __future__ import annotations


def format_labels(labels: dict[str, str], drop=("__name__", "alertname", "alertstate")) -> str:
    """``{a=1, b=2}``: the labels sorted by name, those named in ``drop`` left out."""
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in drop) + "}"
