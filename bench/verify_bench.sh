#!/usr/bin/env bash
# The trench verify benchmark (docs/VERIFY.md): for every kernel of
# tests/kernels/, what random differential testing finds in N seeds
# (default 1000; the kernel run concretely on the default inputs of
# docs/INPUTS.md, outputs zero-filled, judged by the oracle) and what
# `trench verify` finds (bug kernels with --first: time to the first
# confirmed counterexample; correct ones: every default location), with
# wall times; then every registered defect of the built-in compiler:
# `trench compile --inject NAME` on its trigger module, checked by
# `trench verify --emitted`. Usage: bench/verify_bench.sh [BUILD] [--seeds N]
set -u
build=${1:-build}
shift || true
seeds=1000
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    *) echo "usage: bench/verify_bench.sh [BUILD] [--seeds N]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
trench=$build/trench
kd=$root/tests/kernels
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
now() { date +%s.%N; }
printf '%-30s %-22s %-18s %7s  %-34s %6s\n' KERNEL EXPECT "RANDOM($seeds)" TIME VERIFY TIME
nbug=0 caught=0 false_alarm=0 rnd_caught=0 missed_by_random=""
times=""
for k in "$kd"/*.c "$kd"/*.cu "$kd"/*.py; do
  head=$(grep -m1 'trench-kernel:' "$k")
  ref=$(printf '%s' "$head" | sed -n 's/.*ref=\([^ ]*\).*/\1/p')
  exp=$(printf '%s' "$head" | sed -n 's/.*expect=\([^ ]*\).*/\1/p')
  t0=$(now)
  rout=$("$trench" verify --ref "$kd/$ref" --kernel "$k" --random "$seeds" 2>&1)
  t1=$(now)
  rnd=$(printf '%s\n' "$rout" | sed -n 's/^random: \([0-9]*\) of \([0-9]*\) seeds fail.*/\1 fail/p')
  [ -z "$rnd" ] && rnd="error"
  first=--first
  case $exp in correct*) first= ;; esac
  t2=$(now)
  vout=$("$trench" verify --ref "$kd/$ref" --kernel "$k" $first 2>&1)
  vrc=$?
  t3=$(now)
  sum=$(printf '%s\n' "$vout" | sed -n 's/^summary: \([0-9]*\) locations: \([0-9]*\) equivalent over the reals, \([0-9]*\) counterexamples, \([0-9]*\) unknown; \([0-9]*\) kernel-wide findings.*/\2 eq \3 cex \4 unk \5 kw/p')
  [ -z "$sum" ] && sum="error"
  case $exp in
    bug:*)
      nbug=$((nbug + 1))
      vt=$(echo "$t3 - $t2" | bc)
      if [ $vrc = 1 ] && printf '%s\n' "$sum" | grep -Eq '([1-9][0-9]* cex|[1-9][0-9]* kw)'; then
        caught=$((caught + 1)); verdict="caught ($sum)"; times="$times $vt"
      else verdict="MISSED ($sum)"; fi
      case $rnd in "0 fail") missed_by_random="$missed_by_random $(basename "$k")" ;; error) ;; *) rnd_caught=$((rnd_caught + 1)) ;; esac ;;
    *)
      if [ $vrc = 0 ] && printf '%s\n' "$sum" | grep -Eq ' 0 cex 0 unk 0 kw'; then verdict="ok ($sum)"
      else verdict="FALSE ALARM/UNKNOWN ($sum)"; false_alarm=$((false_alarm + 1)); fi ;;
  esac
  printf '%-30s %-22s %-18s %6.1fs  %-34s %5.1fs\n' "$(basename "$k")" "$exp" "$rnd" "$(echo "$t1 - $t0" | bc)" "$verdict" "$(echo "$t3 - $t2" | bc)"
done
echo
echo "bug kernels: $nbug; caught by verify: $caught; caught by random testing ($seeds seeds): $rnd_caught"
echo "correct kernels with a false alarm or unknown: $false_alarm"
if [ -n "$times" ]; then
  printf '%s\n' $times | sort -n | awk '{a[NR]=$1} END {i=int(NR*0.9+0.5); if (i < 1) i = 1; printf "verify time to the first counterexample: min %.1fs median %.1fs p90 %.1fs max %.1fs\n", a[1], a[int((NR+1)/2)], a[i], a[NR]}'
fi
echo "missed by random testing, caught by verify:$missed_by_random"
echo
echo "== registered defects of the built-in compiler: trench verify --emitted on the C of trench compile --inject NAME"
nd=0 dc=0 ce=0
for name in $("$trench" defects | awk 'NR > 1 {print $1}'); do
  nd=$((nd + 1))
  h=$root/tests/defects/$name.hlo
  if [ ! -f "$h" ]; then printf '%-42s no trigger module\n' "$name"; continue; fi
  if ! "$trench" compile "$h" --inject "$name" -o "$tmp/$name.c" >/dev/null 2>&1; then
    printf '%-42s compile failed\n' "$name"; continue
  fi
  t0=$(now)
  out=$("$trench" verify --ref "$h" --kernel "$tmp/$name.c" --emitted --first 2>&1)
  rc=$?
  t1=$(now)
  # the same module compiled without the defect: no false alarm
  clean="clean: not compiled"
  if "$trench" compile "$h" -o "$tmp/$name.clean.c" >/dev/null 2>&1; then
    cout=$("$trench" verify --ref "$h" --kernel "$tmp/$name.clean.c" --emitted 2>&1)
    if [ $? = 0 ] && printf '%s\n' "$cout" | grep -q '^summary: .* 0 counterexamples, 0 unknown'; then
      clean="clean: equivalent"; ce=$((ce + 1))
    else clean="clean: FALSE ALARM/UNKNOWN"; fi
  fi
  if [ $rc = 1 ] && printf '%s\n' "$out" | grep -q '^summary: .* [1-9][0-9]* counterexamples'; then
    dc=$((dc + 1)); printf '%-42s caught %5.1fs   %s\n' "$name" "$(echo "$t1 - $t0" | bc)" "$clean"
  else
    why=$(printf '%s\n' "$out" | grep -v '^out' | tail -1 | sed "s|$tmp/||; s|$root/||" | cut -c1-110)
    printf '%-42s not caught: %s   %s\n' "$name" "$why" "$clean"
  fi
done
echo "defects caught by verify: $dc of $nd; clean compiles of their trigger modules equivalent: $ce of $nd"
