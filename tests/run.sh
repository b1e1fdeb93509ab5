#!/usr/bin/env bash
# Runs the test suites of the chosen tiers, several at once, and ends with
# one line "N passed, N failed".
# Usage: tests/run.sh BUILD_DIR [TIER...]
#   offline  unit and CLI suites, no network, no virtualenv (make check)
#   xla      real XLA through jax: the adapter, the acceptance slice and
#            the recorded findings (make check-xla)
#   all      every tier (make test; the default)
# TRENCH_TEST_JOBS: suites run at once (default: the number of cores).
set -u
build=${1:-build}
shift || true
tiers=" ${*:-all} "
here=$(cd "$(dirname "$0")" && pwd)
jobs=${TRENCH_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
out=$(mktemp -d "${TMPDIR:-/tmp}/trench-tests.XXXXXX")
trap 'rm -rf "$out"' EXIT

# The suites: name, tier, command. Each prints "N passed, N failed" last.
names=() cmds=()
suite() {
  local name=$1 tier=$2; shift 2
  case "$tiers" in *" $tier "*|*" all "*) ;; *) return ;; esac
  names+=("$name")
  cmds+=("$(printf '%q ' "$@")")
}
suite unit offline "$build/unit" "$here"
suite cli offline bash "$here/cli.sh" "$build/trench" "$here"
suite cli_run offline bash "$here/cli_run.sh" "$build/trench" "$here"
suite cli_check offline bash "$here/cli_check.sh" "$build/trench" "$here"
suite cli_profile xla bash "$here/cli_profile.sh" "$build/trench" "$here"
suite cli_traps xla bash "$here/cli_traps.sh" "$build/trench" "$here"
suite cli_defects offline bash "$here/cli_defects.sh" "$build/trench" "$here"
suite cli_compile offline bash "$here/cli_compile.sh" "$build/trench" "$here"
suite cli_gen offline bash "$here/cli_gen.sh" "$build/trench" "$here"
suite embed offline bash "$here/embed.sh" "$build" "$here"
suite fault offline bash "$here/fault.sh" "$build/trench" "$here"
suite oom offline bash "$here/oom.sh" "$build/trench" "$here"
suite cli_fuzz offline bash "$here/cli_fuzz.sh" "$build/trench" "$here"
suite cli_verify offline bash "$here/cli_verify.sh" "$build/trench" "$here"
suite cli_triage offline bash "$here/cli_triage.sh" "$build/trench" "$here"
# Real XLA through jax: creates the project virtualenv on first use.
suite xla xla bash "$here/adapters/test_xla.sh" "$build"
suite findings xla bash "$here/findings.sh" "$build/trench" "$here"
suite cli_triage_xla xla bash "$here/cli_triage_xla.sh" "$build/trench" "$here"

# Run them, at most $jobs at a time; each writes its own log.
running=0
for i in "${!names[@]}"; do
  ( eval "${cmds[$i]}" > "$out/$i.log" 2>&1; echo $? > "$out/$i.rc" ) &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait

total_pass=0
total_fail=0
for i in "${!names[@]}"; do
  name=${names[$i]}
  rc=$(cat "$out/$i.rc" 2>/dev/null || echo 99)
  last=$(tail -n 1 "$out/$i.log")
  if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    total_pass=$((total_pass + BASH_REMATCH[1]))
    total_fail=$((total_fail + BASH_REMATCH[2]))
    if [ "${BASH_REMATCH[2]}" != 0 ] || [ "$rc" != 0 ]; then cat "$out/$i.log"; fi
    echo "$name: $last"
  else
    cat "$out/$i.log"
    echo "$name: crashed or gave no summary (exit $rc)"
    total_fail=$((total_fail + 1))
  fi
done
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" = 0 ]
