"""The package version every stage stamps on what it writes (run.json, Harbor datasets, sites)."""

__version__ = "0.1.0"

DATASET_VERSION = "0.2.0"
"""The version of the generated task corpus and its check catalogs: registry.json names it,
every ``tests/checks.json`` carries it (``catalog_version``), and every grade and run names the
one it was graded against. Bumped whenever the generator changes what a task checks
(0.2.0: issue 14's new inhibit, route, timing, label and burst checks, and check roles)."""
