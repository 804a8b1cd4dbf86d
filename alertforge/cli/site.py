"""Commands that build and publish the viewer: ``export``, ``publish`` and ``demo``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from alertforge.cli.options import (
    add_jobs_option,
    add_redaction_options,
    add_tasks_option,
    command_name,
    engine,
    redactor,
    task_index,
)
from contract.errors import BadInput
from contract.paths import SPACE_DIR, task_dirs
from contract.text import counted


def add_export(sub) -> None:
    """``export RUNS... --out DIR [--single-file OUT.html]`` and ``export RUN --markdown
    [--out FILE] [--site-url URL]``."""
    export = sub.add_parser("export", help="export runs into site data and pages, or one run as Markdown")
    export.add_argument("runs", nargs="+", help="run folders, or folders of run folders")
    export.add_argument("--out", help="site folder to write (with --markdown: the Markdown file; "
                        "default stdout)")
    export.add_argument("--single-file", metavar="OUT.html",
                        help="also (or only) write one self-contained HTML file that works via file://")
    export.add_argument("--markdown", action="store_true",
                        help="write the one run given as Markdown to paste into a chat or an issue: "
                        "task, steps, reward, failing checks with causes and blame")
    export.add_argument("--site-url", metavar="URL",
                        help="with --markdown: the published viewer, so cut parts link to their step")
    add_redaction_options(export, "(token formats, secret config fields, URL credentials, "
                          "private keys, webhooks, e-mail addresses) in every string")
    export.add_argument("--ray", metavar="ADDRESS",
                        help="read and mask the runs on the Ray cluster whose head is at ADDRESS "
                        "(HOST:PORT; default $RAY_ADDRESS): the same site, the work on its workers")
    export.add_argument("--no-media", dest="with_media", action="store_false",
                        help="leave out the images and audio runs' agents saw (each part is "
                        "named instead); by default they are re-encoded with no metadata")
    add_tasks_option(export, repeatable=True,
                     help="task folders to find the runs' tasks in, by id and fingerprint "
                     "(repeatable; the bundled tasks/ are always searched)")
    export.set_defaults(func=export_command)


def export_command(args: argparse.Namespace) -> int:
    """Write the site folder and/or the single file; print what was written and redacted.

    Raises:
        BadInput: neither ``--out`` nor ``--single-file``, or a run that cannot be exported.
    """
    from exporter.export import export_site
    from exporter.single_file import export_single_file

    if args.markdown:
        return markdown_command(args)
    if not args.out and not args.single_file:
        raise BadInput("--out", "export needs --out DIR or --single-file OUT.html")
    runs = [Path(p) for p in args.runs]
    index = task_index(args)
    if args.out:
        masker = redactor(args)
        chosen = engine(args)
        summary = export_site(runs, Path(args.out), redactor=masker if masker is not None else False,
                              task_index=index, with_media=args.with_media, engine=chosen)
        if getattr(chosen, "jobs", None):
            print(f"ray: made {counted(sum(chosen.jobs.values()), 'run')} on "
                  + ", ".join(f"{worker} ({done})" for worker, done in sorted(chosen.jobs.items())), file=sys.stderr)
        reused = summary.get("reused") or 0
        print(f"exported {counted(summary.get('runs') or 0, 'run')} of {counted(summary.get('tasks') or 0, 'task')} "
              f"into {args.out}" + (f" (reused {reused} unchanged since the last export)" if reused else ""))
        print(f"  to see it: {command_name()} serve {args.out}")
        for left in summary.get("skipped") or []:
            print(f"alertforge: skipped {left['path']}: {left['reason']}", file=sys.stderr)
        _print_redaction(masker, summary["renamed_ids"])
    if args.single_file:
        masker = redactor(args)
        summary = export_single_file(runs, Path(args.single_file), redactor=masker, task_index=index,
                                     with_media=args.with_media)
        print(f"wrote {counted(summary['runs'], 'run')} into {args.single_file} ({counted(summary['bytes'], 'byte')})")
        _print_redaction(masker, summary.get("renamed_ids", []))
    return 0


def markdown_command(args: argparse.Namespace) -> int:
    """``export RUN --markdown``: the run as Markdown on stdout, or atomically into ``--out``.

    Raises:
        BadInput: not exactly one run folder, ``--single-file`` given too, or a run that
            cannot be read (names the file).
    """
    import sys

    from contract.files import write_atomic
    from exporter.markdown import run_markdown

    if len(args.runs) != 1 or args.single_file:
        raise BadInput("--markdown", "export --markdown takes exactly one run folder and no --single-file")
    text = run_markdown(Path(args.runs[0]), redactor=redactor(args), task_index=task_index(args),
                        site_url=args.site_url)
    if args.out:
        write_atomic(Path(args.out), text)
        print(f"wrote {args.out} ({len(text)} characters)", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _print_redaction(masker, renamed: list[str]) -> None:
    print(masker.report() if masker is not None else "not redacted (--no-redact)")
    for new_id in renamed:
        print(f"renamed: an id that held a secret is now {new_id}")


def add_publish(sub) -> None:
    """``publish --space ORG/NAME``: upload a built site to a Hugging Face static Space."""
    publish = sub.add_parser("publish", help="upload the built site to a Hugging Face static Space")
    publish.add_argument("--space", required=True, metavar="ORG/NAME")
    publish.add_argument("--site", default=str(SPACE_DIR), help="the built site (default: space/)")
    publish.add_argument("--dry-run", action="store_true",
                         help="list the files and sizes that would be uploaded; upload and write nothing")
    publish.add_argument("--with-media", action="store_true",
                         help="upload the site's images and audio (data/media/) too: their pixels "
                         "and sound cannot be checked for secrets, so look at them first")
    add_redaction_options(publish, "in the uploaded copy")
    publish.set_defaults(func=publish_command)


def publish_command(args: argparse.Namespace) -> int:
    """Upload (or list, with ``--dry-run``) the site.

    Raises:
        exporter.publish.PublishRefused: the site cannot be published as it is (exit 1).
    """
    from exporter.publish import publish_site

    publish_site(Path(args.site), args.space, dry_run=args.dry_run, redactor=redactor(args),
                 with_media=args.with_media)
    return 0


def add_serve(sub) -> None:
    """``serve``: an exported site over HTTP on 127.0.0.1, as a static host serves it."""
    serve = sub.add_parser("serve", help="serve an exported site on 127.0.0.1 (gzip, ETags)")
    serve.add_argument("site", help="a folder `alertforge export` or `demo` wrote (index.html, data/, static/)")
    serve.add_argument("--port", type=int, default=None,
                       help="port to serve on (0: any free one); by default 8000, or the next free "
                            "port after it, said when it moves; a --port that is taken is refused")
    serve.add_argument("--open", action="store_true", help="open the site in the desktop's browser")
    serve.set_defaults(func=serve_command)


def serve_command(args: argparse.Namespace) -> int:
    """Serve the site until Ctrl-C.

    Raises:
        BadInput: the folder holds no exported site, or the given --port is taken.
    """
    from exporter.serve import serve

    site = Path(args.site)
    if not (site / "index.html").is_file():
        raise BadInput(site, "not an exported site (no index.html): export runs into it first, "
                             "alertforge export RUNS... --out " + str(site))
    serve(site, port=8000 if args.port is None else args.port, strict=args.port is not None,
          open_browser=args.open)
    return 0


def add_demo(sub) -> None:
    """``demo``: reference runs, ARIA examples and the real model runs of examples/llm-runs/,
    exported into space/ and served."""
    demo = sub.add_parser("demo", help="record reference runs, export them into space/, serve")
    demo.add_argument("--no-serve", action="store_true",
                      help="record and export, print the time taken and exit instead of serving")
    demo.add_argument("--port", type=int, default=None,
                      help="port to serve on (0: any free one); by default 8000 or the next free port, "
                           "said when it moves; a --port that is taken is refused before anything is recorded")
    add_tasks_option(demo)
    demo.add_argument("--runs", default=str(SPACE_DIR.parent / "runs"),
                      help="where the runs are recorded (default: runs/ in the checkout; runs already "
                           "there are reused)")
    demo.add_argument("--out", default=str(SPACE_DIR), help="the site folder (default: space/ in the checkout)")
    add_jobs_option(demo)
    demo.set_defaults(func=demo_command)


def demo_command(args: argparse.Namespace) -> int:
    """Record, import and export, printing the time taken. Unless ``--no-serve``, the site is
    served from the start: runs appear as they are recorded (:class:`alertforge.view.live.LiveSite`
    over the runs folder, exporting into ``--out``), and it keeps serving until Ctrl-C."""
    from exporter.export import export_site
    from recorder.reference_runs import demo_policies, record_reference

    started = time.perf_counter()
    runs_dir = Path(args.runs)
    runs_dir.mkdir(parents=True, exist_ok=True)
    out = Path(args.out)
    live = None if args.no_serve else _start_live_demo(args, runs_dir, out)
    record_reference(task_dirs(args.tasks), runs_dir, jobs=args.jobs, policies=demo_policies, mutants=1)
    import_demo_episodes(runs_dir)
    import_demo_llm_runs(runs_dir)
    if live is None:
        summary = export_site([runs_dir], out, task_index=task_index(args))
        print(f"built {out} from {counted(summary.get('runs') or 0, 'run')} in {time.perf_counter() - started:.1f} s")
        return 0
    from alertforge.view.server import close

    site, server = live
    try:
        while not site.up_to_date():  # the export that holds every run (none, when all were reused)
            time.sleep(0.5)
        print(f"built {out} from {counted(site.runs, 'run')} in {time.perf_counter() - started:.1f} s", flush=True)
        from exporter.serve import server_url

        print(f"still serving it at {server_url(server)} (Ctrl-C to stop); your own runs: {command_name()} view FOLDER",
              flush=True)
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        close(site, server)
    return 0


def _start_live_demo(args: argparse.Namespace, runs_dir: Path, out: Path):
    """Serve ``out`` now and export ``runs_dir`` into it whenever it changes; (site, server)."""
    import threading

    from alertforge.view.inputs import Input
    from alertforge.view.live import LiveSite
    from alertforge.view.server import start_server
    from exporter.serve import server_url

    site = LiveSite([Input("runs", runs_dir)], runs_dir.parent / ".demo-view", site=out,
                    task_index=task_index(args), interval=2.0)
    port = 8000 if args.port is None else args.port
    server = start_server(site, port, strict=args.port is not None)
    if port not in (0, server.server_address[1]):
        print(f"port {port} is taken: using {server.server_address[1]}", flush=True)
    print(f"Serving {out} at {server_url(server)} while the runs are recorded (Ctrl-C to stop)", flush=True)
    threading.Thread(target=site.run, name="demo-view", daemon=True).start()
    return site, server


def import_demo_episodes(runs_dir: Path) -> None:
    """The demo's ARIA episodes: examples/aria-episodes/episodes/*.json imported into runs_dir."""
    from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes

    import_episodes(sorted(EXAMPLE_EPISODES.glob("*.json")), runs_dir)


LLM_EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "llm-runs"
"""Run folders of real model runs the demo shows beside the reference runs (SmolLM2-135M on
llama-cpp-python's server, recorded by bench/llama_runs.py; see examples/llm-runs/SOURCE.md)."""


def import_demo_llm_runs(runs_dir: Path, examples: Path = LLM_EXAMPLES) -> list[Path]:
    """Copy each run folder of ``examples`` (regular files only, through the safe-read path)
    into ``runs_dir``; returns the copies. A run already there is replaced."""
    import shutil

    from contract.untrusted import Tree

    copies = []
    folders = sorted(examples.iterdir()) if examples.is_dir() else []
    for folder in (f for f in folders if (f / "run.json").is_file()):
        target = Path(runs_dir) / folder.name
        shutil.rmtree(target, ignore_errors=True)
        Tree(folder).copy_into(target)
        copies.append(target)
    return copies
