"""exporter: turns recorded runs (run.json + ATIF trajectory.json) into the static site's data and pages.

Modules, one job each:

- ``run_folders``: find run folders and read run.json + trajectory.json (validated).
- ``task_folder``: read the task a run names (instruction, check catalog, pristine files).
- ``diffs``: replay ``write_file`` calls and produce unified diff hunks.
- ``steps``: per-step reward, cumulative reward, check-state strings, changed checks.
- ``site_data``: the three JSON documents of docs/formats.md "Site data".
- ``render``: the jinja2 pages (autoescape on).
- ``export``: ``export_site``, the whole stage, writing atomically.
- ``serve``: serve a built site on 127.0.0.1.
- ``redact``: mask secrets (API keys, tokens, URL passwords, webhooks, e-mail addresses) in strings.
- ``single_file``: one self-contained HTML file of an export (``export --single-file``).
- ``publish``: stage, list and upload a built site to a Hugging Face static Space.
"""
