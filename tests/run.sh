#!/usr/bin/env bash
# Runs every test suite and ends with one line "N passed, N failed".
# Usage: tests/run.sh BUILD_DIR
set -u
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
total_pass=0
total_fail=0
run_suite() {
  local name=$1; shift
  local out
  out=$("$@" 2>&1)
  local rc=$?
  local last
  last=$(printf '%s\n' "$out" | tail -n 1)
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    total_pass=$((total_pass + BASH_REMATCH[1]))
    total_fail=$((total_fail + BASH_REMATCH[2]))
    if [ "${BASH_REMATCH[2]}" != 0 ] || [ $rc != 0 ]; then printf '%s\n' "$out"; fi
    echo "$name: $last"
  else
    printf '%s\n' "$out"
    echo "$name: crashed or gave no summary (exit $rc)"
    total_fail=$((total_fail + 1))
  fi
}
run_suite unit "$build/unit" "$here"
run_suite cli bash "$here/cli.sh" "$build/trench" "$here"
run_suite cli_run bash "$here/cli_run.sh" "$build/trench" "$here"
run_suite cli_check bash "$here/cli_check.sh" "$build/trench" "$here"
run_suite cli_profile bash "$here/cli_profile.sh" "$build/trench" "$here"
run_suite cli_traps bash "$here/cli_traps.sh" "$build/trench" "$here"
run_suite cli_defects bash "$here/cli_defects.sh" "$build/trench" "$here"
run_suite cli_compile bash "$here/cli_compile.sh" "$build/trench" "$here"
run_suite cli_gen bash "$here/cli_gen.sh" "$build/trench" "$here"
# Real XLA through jax: creates the project virtualenv on first use.
run_suite xla bash "$here/adapters/test_xla.sh" "$build"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
