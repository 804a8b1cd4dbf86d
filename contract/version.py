"""The package version every stage stamps on what it writes (run.json, Harbor datasets, sites)."""

__version__ = "0.4.0"

DATASET_VERSION = __version__
"""The version of the generated task corpus and its check catalogs: registry.json names it,
every ``tests/checks.json`` carries it (``catalog_version``), and every grade and run names the
one it was graded against. It is the release's version: every task folder ships that
release's verifier wheel, so a new release is a new dataset (0.2.0: the verifier in the task;
0.3.0: issue 14's new inhibit, route, timing, label and burst checks, and check roles;
0.4.0: where pages go and when: destination, removed-receiver and notification timing checks)."""
