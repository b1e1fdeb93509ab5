#!/usr/bin/env bash
# fuzz_detect.sh - the fuzzer's detection table: for every planted defect of
# the built-in compiler (`trench defects`) a blind campaign (`trench fuzz`,
# default corpus, no trigger module) against builtin:jit=tcc,inject=NAME
# with a fixed budget, stopped at its first finding. One row per defect:
#   defect, found (yes/no), seconds and tests to the first finding, its
#   signature, the campaign's tests/s.
# Then a campaign of the same budget with no defect, which must find
# nothing, and the median time to a finding.
#
# Usage: bench/fuzz_detect.sh [BUILD_DIR] [--budget S] [--jobs J] [--seed S]
#                             [--only NAME] [--clean S]
#   --budget S  seconds per defect (60); --jobs J workers (2); --clean S
#   the no-defect campaign's seconds (default: the budget)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=build
if [ $# -gt 0 ] && [ -x "$1/trench" ]; then build=$1; shift; fi
budget=60
jobs=2
seed=1
only=
clean=
while [ $# -gt 0 ]; do
  case $1 in
    --budget) budget=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --clean) clean=$2; shift 2 ;;
    *) echo "fuzz_detect.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
clean=${clean:-$budget}
trench=$root/$build/trench
[ -x "$trench" ] || { echo "fuzz_detect.sh: no $trench (run make)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# first_finding LOG: "SECONDS TESTS SIG" of the first finding, or "".
first_finding() {
  awk '{ n++ } /"outcome":"finding"/ {
         match($0, /"at":[0-9.e+-]+/); at = substr($0, RSTART + 5, RLENGTH - 5)
         match($0, /"sig":"[^"]*"/); sg = substr($0, RSTART + 7, RLENGTH - 8)
         printf "%.1f %d %s\n", at, n, sg; exit }' "$1"
}
rate() { sed -n 's/.*"run_tests":[ \t]*\([0-9]*\).*/\1/p' "$1/summary.json" | head -1; }
printf '%-34s %-5s %8s %7s  %-36s %s\n' defect found seconds tests signature tests/s
found=0 total=0
times=""
for d in $("$trench" defects | awk 'NR > 1 { print $1 }'); do
  [ -n "$only" ] && [ "$d" != "$only" ] && continue
  out=$tmp/$d
  start=$(date +%s.%N)
  "$trench" fuzz --target "builtin:jit=tcc,inject=$d" --time "$budget" --jobs "$jobs" --seed "$seed" \
    --until-finding --out "$out" -q > "$out.txt" 2>&1
  el=$(echo "$(date +%s.%N) - $start" | bc)
  total=$((total + 1))
  ff=$(first_finding "$out/log.jsonl")
  n=$(wc -l < "$out/log.jsonl")
  tps=$(awk -v n="$n" -v t="$el" 'BEGIN { printf "%.1f", n / t }')
  if [ -n "$ff" ]; then
    found=$((found + 1))
    set -- $ff
    times="$times $1"
    printf '%-34s %-5s %8s %7s  %-36s %s\n' "$d" yes "$1" "$2" "$3" "$tps"
  else
    times="$times 9999"
    printf '%-34s %-5s %8s %7s  %-36s %s\n' "$d" no "-" "$n" "-" "$tps"
  fi
done
median=$(printf '%s\n' $times | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
echo "found $found of $total within ${budget} s on $jobs jobs; median time to the first finding ${median} s (9999 = not found)"
[ -n "$only" ] && exit 0
# No defect: must find nothing.
"$trench" fuzz --target builtin:jit=tcc --time "$clean" --jobs "$jobs" --seed "$seed" --out "$tmp/clean" -q \
  > "$tmp/clean.txt" 2>&1
rc=$?
echo "no defect, ${clean} s on $jobs jobs:"
sed 's/^/  /' "$tmp/clean.txt"
[ $rc = 0 ] || { echo "FAIL: the campaign without a defect found something (or failed)"; exit 1; }
