#!/usr/bin/env bash
# End-to-end test of `trench reduce` on real XLA CPU (docs/TRIAGE.md): a
# constant fold XLA gets wrong, inside a chain of ops whose output is not
# the culprit, is isolated to the fold and its pass (translation
# validation on XLA's pass dumps) and reduced to the fold alone. Creates
# the project virtualenv when needed (scripts/venv.sh).
# Usage: tests/cli_triage_xla.sh TRENCH TESTS_DIR. Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
case $trench in /*) ;; *) trench=$PWD/$trench;; esac
py=$(bash "$root/scripts/venv.sh" | tail -n 1)
if [ ! -x "$py" ]; then
  echo "cli_triage_xla: cannot create the virtualenv (scripts/venv.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

f=$tests/triage/xla_clz_fold_chain.hlo
[ -f "$f" ] && ok || bad "missing $f"
expect 1 'Culprit instruction\*\*: `%z` \(count-leading-zeros\)' -- "$trench" reduce "$f" --target xla-cpu --seeds 1 --save "$tmp/b"
if "$py" -c "
import json; r=json.load(open('$tmp/b/report.json')); L=r['levels']
assert L['passes']['pass']=='constant_folding', L['passes']
red=L['reduce']; assert red['culprit_op']=='count-leading-zeros', red
assert red['instructions_after']<=2 and red['instructions_after']<red['instructions_before'], red"; then ok
else bad "report.json: culprit op, pass or reduced size"; fi
grep -q 'count-leading-zeros' "$tmp/b/reduced.hlo" && ok || bad "reduced.hlo lost the fold"
finish
