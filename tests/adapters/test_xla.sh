#!/usr/bin/env bash
# Tests the XLA adapter (adapters/xla) on real XLA CPU: creates the project
# virtualenv when needed (scripts/venv.sh: about 15 s the first time, well
# under a second after), then
#   1. xla_check.py drives the adapter over the protocol: outputs against
#      hand-computed values, dtypes numpy lacks, pass control, and the
#      proof that XLA's before-optimizations HLO is the module sent;
#   2. the C target (build/unit, tests target_xla*) drives it as trench does,
#      including a real XLA crash and the restart after it;
#   3. a slice of the acceptance suite (xla_suite.sh --slice: every 12th
#      module of tests/xla-suite and two known XLA findings; `make
#      xla-suite` runs all of it);
#   4. xla_received.sh: the module XLA received against the one sent, and
#      StableHLO input.
# Ends with one line "N passed, N failed" (the sum of both).
# Usage: tests/adapters/test_xla.sh [BUILD_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
case $build in /*) ;; *) build=$PWD/$build;; esac
py=$(bash "$root/scripts/venv.sh" | tail -n 1)
if [ ! -x "$py" ]; then
  echo "test_xla: cannot create the virtualenv (scripts/venv.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
pass=0
fail=0
add() { # adds the counts of a "N passed, N failed" output
  local last
  last=$(printf '%s\n' "$1" | tail -n 1)
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    pass=$((pass + BASH_REMATCH[1]))
    fail=$((fail + BASH_REMATCH[2]))
  else
    fail=$((fail + 1))
  fi
  printf '%s\n' "$1" | sed '$d'
}
out=$("$py" "$here/xla_check.py" "$root" "$build/trench" 2>&1)
add "$out"
out=$(TRENCH_TEST_XLA=1 "$build/unit" "$root/tests" target_xla 2>&1)
add "$out"
out=$(bash "$here/xla_suite.sh" --slice "$build" 2>&1)
add "$out"
out=$(bash "$here/xla_received.sh" "$build" 2>&1)
add "$out"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
