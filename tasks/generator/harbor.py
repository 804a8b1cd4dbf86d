"""The Harbor side of a task folder, and the corpus files beside the folders.

:func:`harbor_files` adds to a task's files (``generate.task_files``) what Harbor needs to
run it: the agent's image (``environment/Dockerfile``), a separate verifier image
(``tests/Dockerfile``) holding the hidden test files and a copy of the pristine repo
(``tests/pristine/``), the verifier entry point (``tests/test.sh``), the checksums it
verifies before grading (``tests/checksums.sha256``), and the Harbor keys of task.toml
(the agent without network, the verifier in its own container, the agent's repo handed to
it as an artifact).

:func:`write_corpus_files` writes ``registry.json`` (Harbor datasets) and
``manifest.jsonl`` (one row per task) next to the task folders. Shapes: docs/formats.md,
"Corpus files". Everything is a pure function of its inputs: equal tasks, equal bytes.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path

import yaml

from contract.files import dump_json, read_json, write_atomic
from contract.version import __version__
from tasks.generator import verifier_wheel

WORKSPACE = "/app/monitoring"
"""Where the agent's monitoring repo lives in both containers."""

HIDDEN_TEST_FILES = ("spec.json", "checks.json", "reference_records.yml")
"""The hidden test files test.sh refuses to grade with when their checksum differs."""

PRISTINE_DIR = "tests/pristine"
"""A copy of environment/monitoring: the verifier image's reference for preservation and q_pristine."""

REWARD_KEYS = ("check_pass_rate", "fire_rate", "label_rate", "outcome", "preservation",
               "progress", "req_alerts", "req_inhibit", "req_recording", "req_repairs",
               "req_routing", "reward", "silent_rate", "solved", "syntax_ok", "tamper")
"""The 16 keys of reward.json (GradeResult ``keys``), sorted."""

TASK_TOML_KEYS = (
    ("agent", "network_mode", "no-network"),
    ("verifier", "environment_mode", "separate"),
)
"""(section, key, value) each task.toml must hold (Harbor >= 0.26 task schema)."""

TASK_TOML_ARTIFACTS = [WORKSPACE]
"""Root ``artifacts``: what Harbor copies from the agent's container into the verifier's."""

DATASET = "3ambench"
MINI_DATASET = "3ambench-mini"
MINI_SIZE = 5
TASKS_PREFIX = "tasks"
"""Task paths in registry.json are ``tasks/<task-id>``, relative to the dataset repo's root."""

ENVIRONMENT_DOCKERFILE = f"""\
# 3amBench agent container: Debian 12 with the real promtool (prometheus) and amtool
# (prometheus-alertmanager), the task's monitoring repo in {WORKSPACE}.
FROM debian:bookworm-slim
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
      prometheus prometheus-alertmanager \\
 && rm -rf /var/lib/apt/lists/*
COPY monitoring {WORKSPACE}
WORKDIR /app
"""

TESTS_DOCKERFILE = f"""\\
# 3amBench verifier container (Harbor: [verifier] environment_mode = "separate"; this
# folder is the build context). Debian 12's promtool and amtool, python3, and the grader
# from the verifier wheel in this folder ({verifier_wheel.WHEEL_NAME}: the grader
# and contract packages of alertforge {__version__}, the release that generated this task).
# Harbor copies the agent's {WORKSPACE} in as an artifact and runs /tests/test.sh.
#
# It judges with Debian 12's tools: promtool 2.42 and amtool 0.25, and inhibition as
# Alertmanager 0.25 does (0.25-0.29 semantics; 0.30 and later keep one source per rule).
# Every grade names them in its "tools" and lists any inhibit check whose verdict differs
# between the two semantics in "version_differences".
#
# pip fetches the wheel's dependencies (PyYAML, orjson, pydantic) from the index it is
# configured with (PyPI by default; --build-arg PIP_INDEX_URL=... for a mirror); alertforge
# itself need not be on any index.
#
# No Docker engine runs in this project's CI: tests/test_verifier.py runs these install
# steps into a fresh venv from a copy of the task folder, and tests/test_harbor_task.py runs
# test.sh and solution/solve.sh against the grader of the checkout.
FROM debian:bookworm-slim
RUN apt-get update \\
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \\
      prometheus prometheus-alertmanager python3 python3-venv ca-certificates \\
 && rm -rf /var/lib/apt/lists/*
COPY . /tests/
ARG PIP_INDEX_URL=https://pypi.org/simple
RUN python3 -m venv /opt/alertforge \\
 && /opt/alertforge/bin/pip install --no-cache-dir --index-url "$PIP_INDEX_URL" /tests/{verifier_wheel.WHEEL_NAME}
ENV PATH=/opt/alertforge/bin:$PATH
WORKDIR /app
"""

_KEYS_BASH = " ".join(REWARD_KEYS)

TEST_SH = f"""\
#!/usr/bin/env bash
# 3amBench verifier: grade the agent's monitoring repo with the alertforge grader and write
# reward.json (the 16 GradeResult keys as numbers) plus grade.json (the whole GradeResult).
#
#   ALERTFORGE_WORKSPACE     repo to grade           (default {WORKSPACE})
#   ALERTFORGE_REWARD_PATH   reward file to write    (default /logs/verifier/reward.json)
#   ALERTFORGE_PYTHON        Python with the grader  (default: python3 on PATH, the
#                            verifier image's venv; it runs python -m grader.verify)
#
# Old outputs are deleted first. The hidden test files (spec.json, checks.json,
# reference_records.yml, pristine/) must match checksums.sha256, or nothing is graded.
# Any failure exits non-zero and leaves a reward file with reward 0 (tamper 1 when a
# checksum failed).
set -euo pipefail

tests="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
workspace="${{ALERTFORGE_WORKSPACE:-{WORKSPACE}}}"
reward="${{ALERTFORGE_REWARD_PATH:-/logs/verifier/reward.json}}"
python="${{ALERTFORGE_PYTHON:-python3}}"
outdir="$(dirname "$reward")"
grade_json="$outdir/grade.json"
keys=({_KEYS_BASH})
work=""

write_zero() {{  # $1: the tamper key's value
  local body="" sep="" key value
  for key in "${{keys[@]}}"; do
    value=0
    [ "$key" = tamper ] && value="$1"
    body+="$sep\\"$key\\": $value"
    sep=", "
  done
  printf '{{%s}}\\n' "$body" > "$reward"
}}

fail() {{  # $1: tamper value, $2: message
  echo "3ambench verifier: $2" >&2
  write_zero "$1"
  exit 1
}}

finish() {{
  local rc=$?
  [ -n "$work" ] && rm -rf "$work"
  if [ "$rc" -ne 0 ] && [ ! -s "$reward" ]; then
    write_zero 0
  fi
  exit "$rc"
}}
trap finish EXIT

mkdir -p "$outdir"
rm -f "$reward" "$grade_json" "$outdir/reward.txt"

cd "$tests"
[ -f checksums.sha256 ] || fail 1 "checksums.sha256 is missing"
for name in spec.json checks.json reference_records.yml; do
  grep -qE "^[0-9a-f]{{64}}  $name\\$" checksums.sha256 \\
    || fail 1 "checksums.sha256 does not list $name"
done
sha256sum --check --strict --quiet checksums.sha256 >&2 \\
  || fail 1 "hidden test files do not match checksums.sha256 (tampered or missing)"
listed="$(sed -n 's/^[0-9a-f]\\{{64\\}}  \\(pristine\\/.*\\)$/\\1/p' checksums.sha256 | LC_ALL=C sort)"
present="$(find pristine ! -type d | LC_ALL=C sort)"
[ "$listed" = "$present" ] || fail 1 "pristine/ holds files checksums.sha256 does not list"

[ -d "$workspace" ] || fail 0 "workspace $workspace is not a directory"

work="$(mktemp -d)"
mkdir -p "$work/task/tests" "$work/task/environment"
printf 'version = "1.0"\\n' > "$work/task/task.toml"
cp spec.json checks.json reference_records.yml "$work/task/tests/"
cp -R pristine "$work/task/environment/monitoring"

rc=0
"$python" -m grader.verify "$work/task" --workspace "$workspace" > "$work/grade.json" || rc=$?
[ "$rc" -eq 0 ] || fail 0 "the grader failed (exit $rc)"

python3 - "$work/grade.json" "$reward" ${{keys[@]}} <<'PY' || fail 0 "the grade has no valid keys"
import json, math, os, sys

source, target, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(source, encoding="utf-8") as handle:
    keys = json.load(handle).get("keys")
if not isinstance(keys, dict) or sorted(keys) != sorted(names):
    sys.exit(f"expected exactly the keys {{names}}, got {{keys!r}}")
out = {{}}
for name in names:
    value = keys[name]
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        sys.exit(f"key {{name}} is not a number: {{value!r}}")
    out[name] = value
with open(target + ".tmp", "w", encoding="utf-8") as handle:
    json.dump(out, handle, sort_keys=True)
    handle.write("\\n")
os.replace(target + ".tmp", target)
PY
cp "$work/grade.json" "$grade_json"
echo "3ambench verifier: reward $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["reward"])' "$reward")"
"""


def harbor_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """The Harbor files of one task, given its other files (relative path -> bytes).

    Returns new and replaced entries: the Dockerfiles, test.sh, the verifier wheel (the
    committed release wheel, tasks/generator/verifier_wheel.py), the pristine copy under
    tests/, checksums.sha256 and task.toml with the Harbor keys. Call it last: the
    checksums cover the hidden test files as they are in ``files``.
    """
    out: dict[str, bytes] = {
        "environment/Dockerfile": ENVIRONMENT_DOCKERFILE.encode(),
        "tests/Dockerfile": TESTS_DOCKERFILE.encode(),
        "tests/test.sh": TEST_SH.encode(),
        f"tests/{verifier_wheel.WHEEL_NAME}": verifier_wheel.release_wheel(),
    }
    prefix = "environment/monitoring/"
    for rel, data in files.items():
        if rel.startswith(prefix):
            out[f"{PRISTINE_DIR}/{rel[len(prefix):]}"] = data
    hidden = {f"tests/{name}": files[f"tests/{name}"] for name in HIDDEN_TEST_FILES}
    hidden.update({rel: data for rel, data in out.items() if rel.startswith(PRISTINE_DIR + "/")})
    out["tests/checksums.sha256"] = checksums(hidden, root="tests/")
    if "task.toml" in files:
        out["task.toml"] = harbor_task_toml(files["task.toml"].decode()).encode()
    return out


def checksums(files: dict[str, bytes], root: str) -> bytes:
    """``sha256sum`` format, paths relative to ``root``, sorted by path (C order)."""
    lines = []
    for rel in sorted(files):
        if not rel.startswith(root):
            raise ValueError(f"{rel} is outside {root}")
        name = rel[len(root):]
        if any(c in name for c in "\\\n\r") or name.startswith("/") or ".." in name.split("/"):
            raise ValueError(f"{rel}: a path sha256sum cannot list plainly")
        lines.append(f"{hashlib.sha256(files[rel]).hexdigest()}  {name}\n")
    return "".join(lines).encode()


def harbor_task_toml(text: str) -> str:
    """task.toml with the Harbor keys of :data:`TASK_TOML_KEYS` and root ``artifacts``.

    Keys already present with the right value are left alone (so this is idempotent);
    a key present with another value is a ValueError (no-network is the anti-hacking
    rule: this repo ships the solutions).
    """
    data = tomllib.loads(text)
    lines = text.splitlines()
    for section, key, value in TASK_TOML_KEYS:
        table = data.get(section, {})
        if key in table:
            if table[key] != value:
                raise ValueError(f"task.toml [{section}] {key} = {table[key]!r}, must be {value!r}")
            continue
        entry = f'{key} = "{value}"'
        header = next((i for i, line in enumerate(lines) if line.strip() == f"[{section}]"), None)
        if header is None:
            lines += ["", f"[{section}]", entry]
            continue
        end = next((i for i in range(header + 1, len(lines)) if lines[i].lstrip().startswith("[")),
                   len(lines))
        while end > header + 1 and not lines[end - 1].strip():
            end -= 1
        lines.insert(end, entry)
    if "artifacts" in data:
        if data["artifacts"] != TASK_TOML_ARTIFACTS:
            raise ValueError(f"task.toml artifacts = {data['artifacts']!r}, "
                             f"must be {TASK_TOML_ARTIFACTS!r}")
    else:
        first = next((i for i, line in enumerate(lines) if line.lstrip().startswith("[")), len(lines))
        lines[first:first] = [f'artifacts = ["{WORKSPACE}"]', ""]
    result = "\n".join(lines).rstrip("\n") + "\n"
    check = tomllib.loads(result)
    assert all(check[s][k] == v for s, k, v in TASK_TOML_KEYS), result
    assert check["artifacts"] == TASK_TOML_ARTIFACTS, result
    return result


def rules_format(task: Path, spec: dict) -> str:
    """``plain`` or ``PrometheusRule``: the spec's ``rules_format``, else what the rule files are."""
    if spec.get("rules_format"):
        return str(spec["rules_format"])
    for path in sorted((task / "environment" / "monitoring" / "rules").rglob("*")):
        if path.suffix in (".yml", ".yaml") and path.is_file():
            doc = yaml.safe_load(path.read_text(encoding="utf-8"))
            if isinstance(doc, dict) and doc.get("kind") == "PrometheusRule":
                return "PrometheusRule"
    return "plain"


def manifest_row(task: Path) -> dict:
    """One manifest row: ``{id, workflow, tier, seed, rules_format, requirement_ids, check_count}``."""
    spec = read_json(task / "tests" / "spec.json")
    catalog = read_json(task / "tests" / "checks.json")
    return {
        "id": task.name,
        "workflow": spec["workflow"],
        "tier": spec["tier"],
        "seed": spec["seed"],
        "rules_format": rules_format(task, spec),
        "requirement_ids": sorted(r["id"] for r in catalog["requirements"]),
        "check_count": len(catalog["checks"]),
    }


def mini_set(rows: list[dict]) -> list[str]:
    """The smoke set: one task per workflow (workflow i prefers tier i mod 3), then fill by id.

    With fewer than :data:`MINI_SIZE` tasks, all of them. Returned in task-id order.
    """
    rows = sorted(rows, key=lambda r: r["id"])
    if len(rows) <= MINI_SIZE:
        return [r["id"] for r in rows]
    workflows = list(dict.fromkeys(r["workflow"] for r in rows))
    tiers = ["easy", "medium", "hard"]
    chosen: list[str] = []
    for i, workflow in enumerate(workflows[:MINI_SIZE]):
        own = [r for r in rows if r["workflow"] == workflow]
        preferred = [r for r in own if r["tier"] == tiers[i % 3]]
        chosen.append((preferred or own)[0]["id"])
    for row in rows:
        if len(chosen) >= MINI_SIZE:
            break
        if row["id"] not in chosen:
            chosen.append(row["id"])
    return sorted(chosen)


def registry(rows: list[dict]) -> list[dict]:
    """Harbor registry.json: the full dataset and the mini set (Harbor's DatasetSpec list)."""
    ids = sorted(r["id"] for r in rows)
    mini = mini_set(rows)

    def tasks(names: list[str]) -> list[dict]:
        return [{"name": name, "path": f"{TASKS_PREFIX}/{name}"} for name in names]

    return [
        {"name": DATASET, "version": __version__,
         "description": f"3amBench: Prometheus alerting rules and Alertmanager routing as code, "
                        f"graded by replaying hidden outages through promtool and amtool "
                        f"({len(ids)} tasks).",
         "tasks": tasks(ids)},
        {"name": MINI_DATASET, "version": __version__,
         "description": f"3amBench smoke set: {len(mini)} tasks, one per workflow where there "
                        f"are enough.",
         "tasks": tasks(mini)},
    ]


def corpus_files(tasks: list[Path]) -> dict[str, bytes]:
    """``registry.json`` and ``manifest.jsonl`` for the given task folders."""
    rows = sorted((manifest_row(t) for t in tasks), key=lambda r: r["id"])
    return {
        "registry.json": dump_json(registry(rows)),
        "manifest.jsonl": b"".join(dump_json(r, indent=False) + b"\n" for r in rows),
    }


def write_corpus_files(out: Path, tasks: list[Path]) -> list[Path]:
    """Write :func:`corpus_files` into ``out`` (atomically, each file); returns the paths."""
    written = []
    for name, data in corpus_files(tasks).items():
        write_atomic(out / name, data)
        written.append(out / name)
    return written
