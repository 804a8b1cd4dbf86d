#!/usr/bin/env bash
# 3amBench verifier: grade the agent's monitoring repo with the alertforge grader and write
# reward.json (the 16 GradeResult keys as numbers) plus grade.json (the whole GradeResult).
#
#   ALERTFORGE_WORKSPACE     repo to grade           (default /app/monitoring)
#   ALERTFORGE_REWARD_PATH   reward file to write    (default /logs/verifier/reward.json)
#   ALERTFORGE_PYTHON        Python with the grader  (default: python3 on PATH, the
#                            verifier image's venv; it runs python -m grader.verify)
#
# Old outputs are deleted first. The hidden test files (spec.json, checks.json,
# reference_records.yml, pristine/) must match checksums.sha256, or nothing is graded.
# Any failure exits non-zero and leaves a reward file with reward 0 (tamper 1 when a
# checksum failed).
set -euo pipefail

tests="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
workspace="${ALERTFORGE_WORKSPACE:-/app/monitoring}"
reward="${ALERTFORGE_REWARD_PATH:-/logs/verifier/reward.json}"
python="${ALERTFORGE_PYTHON:-python3}"
outdir="$(dirname "$reward")"
grade_json="$outdir/grade.json"
keys=(check_pass_rate fire_rate label_rate outcome preservation progress req_alerts req_inhibit req_recording req_repairs req_routing reward silent_rate solved syntax_ok tamper)
work=""

write_zero() {  # $1: the tamper key's value
  local body="" sep="" key value
  for key in "${keys[@]}"; do
    value=0
    [ "$key" = tamper ] && value="$1"
    body+="$sep\"$key\": $value"
    sep=", "
  done
  printf '{%s}\n' "$body" > "$reward"
}

fail() {  # $1: tamper value, $2: message
  echo "3ambench verifier: $2" >&2
  write_zero "$1"
  exit 1
}

finish() {
  local rc=$?
  [ -n "$work" ] && rm -rf "$work"
  if [ "$rc" -ne 0 ] && [ ! -s "$reward" ]; then
    write_zero 0
  fi
  exit "$rc"
}
trap finish EXIT

mkdir -p "$outdir"
rm -f "$reward" "$grade_json" "$outdir/reward.txt"

cd "$tests"
[ -f checksums.sha256 ] || fail 1 "checksums.sha256 is missing"
for name in spec.json checks.json reference_records.yml; do
  grep -qE "^[0-9a-f]{64}  $name\$" checksums.sha256 \
    || fail 1 "checksums.sha256 does not list $name"
done
sha256sum --check --strict --quiet checksums.sha256 >&2 \
  || fail 1 "hidden test files do not match checksums.sha256 (tampered or missing)"
listed="$(sed -n 's/^[0-9a-f]\{64\}  \(pristine\/.*\)$/\1/p' checksums.sha256 | LC_ALL=C sort)"
present="$(find pristine ! -type d | LC_ALL=C sort)"
[ "$listed" = "$present" ] || fail 1 "pristine/ holds files checksums.sha256 does not list"

[ -d "$workspace" ] || fail 0 "workspace $workspace is not a directory"

work="$(mktemp -d)"
mkdir -p "$work/task/tests" "$work/task/environment"
printf 'version = "1.0"\n' > "$work/task/task.toml"
cp spec.json checks.json reference_records.yml "$work/task/tests/"
cp -R pristine "$work/task/environment/monitoring"

rc=0
"$python" -m grader.verify "$work/task" --workspace "$workspace" > "$work/grade.json" || rc=$?
[ "$rc" -eq 0 ] || fail 0 "the grader failed (exit $rc)"

python3 - "$work/grade.json" "$reward" ${keys[@]} <<'PY' || fail 0 "the grade has no valid keys"
import json, math, os, sys

source, target, names = sys.argv[1], sys.argv[2], sys.argv[3:]
with open(source, encoding="utf-8") as handle:
    keys = json.load(handle).get("keys")
if not isinstance(keys, dict) or sorted(keys) != sorted(names):
    sys.exit(f"expected exactly the keys {names}, got {keys!r}")
out = {}
for name in names:
    value = keys[name]
    if isinstance(value, bool):
        value = int(value)
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        sys.exit(f"key {name} is not a number: {value!r}")
    out[name] = value
with open(target + ".tmp", "w", encoding="utf-8") as handle:
    json.dump(out, handle, sort_keys=True)
    handle.write("\n")
os.replace(target + ".tmp", target)
PY
cp "$work/grade.json" "$grade_json"
echo "3ambench verifier: reward $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["reward"])' "$reward")"
