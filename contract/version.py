"""The package version every stage stamps on what it writes (run.json, Harbor datasets, sites)."""

__version__ = "0.2.0"
