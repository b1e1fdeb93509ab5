#!/usr/bin/env bash
# triage_fuzz.sh - triage of the fuzzer's first finding of every registered
# defect of the built-in compiler. Per defect: a blind campaign (`trench
# fuzz`, default corpus, no trigger module) against
# builtin:jit=tcc,inject=NAME, time-boxed and stopped at its first finding;
# then `trench reduce` on that finding's bundle. One row per defect:
#   culprit   the instruction the bisection names (%name:op); for a
#             call, conditional or while, %name>%inner:op names the one
#             inside it (inlined and bisected again)
#   op-ok     whether its op is one the defect corrupts (the table below,
#             read off the defect's code in src/comp)
#   pass      the guilty pass by translation validation (codegen: every
#             pass keeps the result) and whether it is the registry's
#   rule      the rewrite rule by fuel bisection (rewrite defects) and the
#             instruction that application rewrote (@%name)
#   runs      target runs of every level; size: reduced entry instructions;
#   all       reduced instructions of every computation (bodies of calls,
#             loops, fusions, reduce computations included)
#   fuzz/tri  seconds to the first finding, seconds of triage
# Ends with the counts: found, culprit op right, pass right, rule found
# for a rewrite defect (pass not codegen), all three, and the median
# reduced sizes. A defect the campaign does not find within the
# budget is "not found" (it counts against the rate).
#
# Usage: bench/triage_fuzz.sh [BUILD_DIR] [--budget S] [--jobs J] [--seed S]
#                             [--only NAME] [--keep DIR] [--reuse]
#   --budget S  campaign seconds per defect (900: the slowest defect took
#               484 s on a loaded machine); --jobs J workers (1)
#   --keep DIR  keep the campaigns (DIR/NAME) and triage bundles there
#   --reuse     with --keep: a defect whose campaign in DIR already ran
#               is not fuzzed again (re-triage after a change)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=build
if [ $# -gt 0 ] && [ -x "$1/trench" ]; then build=$1; shift; fi
budget=900 jobs=1 seed=1 only= keep= reuse=0
while [ $# -gt 0 ]; do
  case $1 in
    --budget) budget=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --reuse) reuse=1; shift ;;
    *) echo "triage_fuzz.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
trench=$root/$build/trench
[ -x "$trench" ] || { echo "triage_fuzz.sh: no $trench (run make)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
work=${keep:-$tmp}
mkdir -p "$work" || exit 2

# The ops each defect corrupts ("elementwise": any op computed by the
# elementwise lane loop; "any": the defect corrupts a value every op can
# read, e.g. a packed parameter, so the first reader is the culprit).
ops_of() {
  case $1 in
    emit-tail-mask-short|fusion-multi-output-operand-by-shape|emit-packed-nibble-order) echo any ;;
    fusion-broadcast-size1-map) echo any ;;
    emit-unsigned-compare-signed) echo "compare maximum minimum clamp select sort reduce" ;;
    emit-narrow-unpack-zext|emit-f8e4m3fn-saturate) echo convert ;;
    constfold-bf16-truncate|constfold-f16-flush-subnormal) echo "convert constant" ;;
    emit-dot-k-block-revisit) echo dot ;;
    emit-shift-amount-mod-width) echo shift-left ;;
    emit-conv-pad-lo-hi-swap|simplify-conv-slice-halo-underflow) echo convolution ;;
    emit-reduce-window-base-dilation) echo reduce-window ;;
    emit-int-minmax-reduce-lanes|fusion-reduce-init-once) echo reduce ;;
    simplify-slice-of-slice-stride|simplify-slice-of-dilated-pad-stride) echo slice ;;
    simplify-dynamic-slice-negative-wrap|simplify-dynamic-slice-nested-lost-clamp) echo dynamic-slice ;;
    simplify-scatter-size1-window-inside) echo scatter ;;
    layout-transpose-size1-wrong-dim|layout-reshape-transpose-inverse-perm) echo transpose ;;
    while-trip-count-le|while-dead-state-cond-index) echo "while get-tuple-element" ;;
    *) echo "?" ;;
  esac
}

"$trench" defects --json | python3 -c "import json,sys; [print(e['name'], e['pass']) for e in json.load(sys.stdin)]" > "$tmp/passes"
printf '%-40s %-26s %-5s %-15s %-42s %5s %5s %4s %6s %6s\n' defect culprit op-ok pass rule runs size all fuzz-s tri-s
: > "$tmp/lines"
for d in $(awk '{ print $1 }' "$tmp/passes"); do
  [ -n "$only" ] && [ "$d" != "$only" ] && continue
  want=$(awk -v n="$d" '$1 == n { print $2 }' "$tmp/passes")
  out=$work/$d
  if [ "$reuse" = 1 ] && [ -f "$out/fuzz_s" ] && [ -f "$out/log.jsonl" ]; then
    fz=$(cat "$out/fuzz_s" 2>/dev/null || echo "-")
  else
    rm -rf "$out"
    s0=$(date +%s.%N)
    "$trench" fuzz --target "builtin:jit=tcc,inject=$d" --time "$budget" --jobs "$jobs" --seed "$seed" \
      --until-finding --out "$out" -q > "$work/$d.fuzz.txt" 2>&1
    fz=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "$fz" > "$out/fuzz_s"
  fi
  # The first finding of the log (a campaign keeps one bundle per signature).
  sig=$(awk '/"outcome":"finding"/ { match($0, /"sig":"[^"]*"/); print substr($0, RSTART + 7, RLENGTH - 8); exit }' \
        "$out/log.jsonl" 2>/dev/null)
  if [ -z "$sig" ] || [ ! -d "$out/findings/$sig" ]; then
    printf '%-40s not found (%s s)\n' "$d" "$budget" | tee -a "$tmp/lines"
    continue
  fi
  s0=$(date +%s.%N)
  rm -rf "$out/triage"
  timeout 900 "$trench" reduce "$out/findings/$sig" --target "builtin:jit=tcc,inject=$d" \
    --save "$out/triage" --json > "$out/report.json" 2> "$out/reduce.err"
  tr=$(awk -v a="$s0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  python3 - "$out/report.json" "$d" "$want" "$(ops_of "$d")" "$fz" "$tr" <<'PY' >> "$tmp/lines" ||
import json, sys
r = json.load(open(sys.argv[1])); L = r["levels"]
name, want, ops, fz, tr = sys.argv[2:7]
i, p, f, red = L["instruction"], L["passes"], L["fuel"], L["reduce"]
op = i.get("op") or ""
cul = ("%" + i["culprit"] + ":" + op) if i.get("culprit") else "-"
if i.get("inner"):  # a call-like culprit: the instruction inside it
    op = i["inner_op"]; cul = "%" + i["culprit"] + ">%" + i["inner"] + ":" + op
opok = bool(op) and (ops == "any" or op in ops.split())
ps = p.get("pass") or "-"
pok = ps == want or (ps == "codegen" and want == "emit")
rule = (f.get("rule") or "-") + ("@%" + f["instruction"] if f.get("instruction") else "")
print("%-40s %-26s %-5s %-15s %-42s %5d %5s %4s %6s %6s" % (name, cul[:26], "yes" if opok else "NO",
      (ps + ("" if pok else "!"))[:15], rule[:42], r["target_runs"],
      red.get("instructions_after", "-"), red.get("instructions_all_after", "-"), fz, tr))
PY
    printf '%-40s (no report: %s)\n' "$d" "$(head -c 120 "$out/reduce.err" | tr '\n' ' ')" >> "$tmp/lines"
  tail -1 "$tmp/lines"
done
python3 - "$tmp/lines" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
n = len(rows)
tri = [r for r in rows if len(r) >= 10 and r[1] not in ("not", "(no")]
found = len(tri) + sum(1 for r in rows if r[1] == "(no")
opok = sum(1 for r in tri if r[2] == "yes")
pok = sum(1 for r in tri if not r[3].endswith("!"))
both = sum(1 for r in tri if r[2] == "yes" and not r[3].endswith("!"))
# A rewrite defect (a pass, not codegen, to blame) needs its rule too.
rok = lambda r: r[3].startswith("codegen") or r[4] != "-"
rules = sum(1 for r in tri if rok(r))
allok = sum(1 for r in tri if r[2] == "yes" and not r[3].endswith("!") and rok(r))
def median(col):
    v = sorted(int(r[col]) for r in tri if r[col].isdigit())
    return "-" if not v else (v[(len(v) - 1) // 2] if len(v) % 2 else (v[len(v) // 2 - 1] + v[len(v) // 2]) / 2)
med, med_all = median(6), median(7)
print("defects %d; first finding within the budget %d; triaged %d; culprit op right %d; pass right %d; "
      "both %d; rule where a pass is to blame %d; all three %d (%.0f%% of defects, %.0f%% of findings); "
      "median reduced size %s instructions (entry), %s (all computations)" %
      (n, found, len(tri), opok, pok, both, rules, allok, 100.0 * allok / max(n, 1), 100.0 * allok / max(found, 1),
       med, med_all))
PY
