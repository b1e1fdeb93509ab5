#!/usr/bin/env bash
# The release sweep: the XLA CPU acceptance suite (tests/xla-suite) on every
# installed jax release (.venv = the pinned one, .venv/jax-VER made by
# `scripts/venv.sh --jax VER`), `trench check --seeds 3 --json` per release
# into OUT/VER.json, then one table: per release the verdict counts, the
# modules that reached XLA changed (the HLO -> StableHLO -> HLO trip, names
# aside), the findings; and every module whose verdict differs between
# releases, which is a lead to triage (a bug fixed or introduced, a rule
# only some releases need). A module with a finding must be listed in
# tests/xla-suite/EXPECTED for that release (a line's optional "only=V1,V2"
# word limits it to those releases), and a listed module must show it on
# its releases. Ends with "N passed, N failed" counting releases.
# Usage: tests/adapters/xla_versions.sh [BUILD_DIR]   (make xla-versions)
#   XLA_VERSIONS: releases to run (default: every installed one)
#   XLA_VERSIONS_OUT: where the JSON reports go (default BUILD_DIR/xla-versions)
#   XLA_VERSIONS_SEEDS: seeds per module (default 3, as make xla-suite)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
case $build in /*) ;; *) build=$PWD/$build;; esac
out=${XLA_VERSIONS_OUT:-$build/xla-versions}
mkdir -p "$out"
suite=$root/tests/xla-suite
ls "$suite"/*.hlo > /dev/null 2>&1 || { echo "xla_versions: no modules in $suite"; echo "0 passed, 1 failed"; exit 1; }
# The pinned release is the one .venv runs.
pinned=$(sed -n 's/^jax==//p' "$root/adapters/xla/requirements.txt")
if [ -n "${XLA_VERSIONS:-}" ]; then
  vers=$XLA_VERSIONS
else
  vers=$pinned
  for d in "$root"/.venv/jax-*; do [ -x "$d/bin/python" ] && vers="$vers ${d##*/jax-}"; done
fi
for v in $vers; do
  t="xla-cpu@$v"
  [ "$v" = "$pinned" ] && t=xla-cpu
  if [ "$t" != xla-cpu ] && [ ! -x "$root/.venv/jax-$v/bin/python" ]; then
    echo "xla_versions: jax $v is not installed (scripts/venv.sh --jax $v)"
    continue
  fi
  start=$(date +%s)
  "$build/trench" check "$suite"/*.hlo --target "$t" --seeds "${XLA_VERSIONS_SEEDS:-3}" --json > "$out/$v.json" 2> "$out/$v.stderr"
  echo "xla_versions: jax $v: $(( $(date +%s) - start )) s" >&2
done
python3 "$here/xla_versions_report.py" "$suite/EXPECTED" "$pinned" "$out" $vers
