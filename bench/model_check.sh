#!/usr/bin/env bash
# model_check.sh - trench run and trench check on real model dumps
# (ResNet-50, DLRM, a transformer block; bench/models.py), printing one
# table: size, reference exact/shadow times, and the check verdicts per
# target over several input seeds.
#   --segs  also checks every segment of each model (shallow modules that
#           together make the whole model, each fed the previous one's
#           output): where the whole model's bounds are too wide to judge
#           anything, the segments are still judged element by element.
#   --per-instruction[=chains]
#           also judges every instruction alone (trench check
#           --per-instruction): the main table gets the per-instruction
#           verdicts per seed, judged/mismatch/weak instructions summed
#           over the seeds, each check's wall time and the instructions
#           the profile excused per seed (RULE=N, docs/PROFILES.md) and
#           those judged against its narrowed reference (narrowed:RULE=N).
#   --cuts  a depth table: the model stopped at several points, checked on
#           the first target, with the largest shadow bound and the real
#           error against an f64 evaluation, showing where the first-order
#           bounds stop being useful.
# A MODEL ending in .hlo is a module file as it is (XLA's own CPU
# benchmark files, docs/MODELS.md): constants written {...} get trench's
# deterministic fill (--fill-elided, the target gets the same values),
# inputs come from FILE.inputs/ as for a models.py dump when it has a
# params.txt (bench/xla_bench_inputs.py) and are drawn with seeds 0..N-1
# otherwise, and it has no segments or cuts.
#
# Usage: bench/model_check.sh [--seeds N] [--targets "T1 T2"] [--segs]
#                             [--cuts] [--per-instruction[=chains]]
#                             [--dir DIR] [MODEL | FILE.hlo ...]
# Defaults: 3 seeds, targets "xla-cpu builtin", DIR /work/models, models
# resnet50 dlrm. Run from the repository root after `make`; the dumps are
# made with .venv/bin/python bench/models.py when DIR lacks them.
set -u
cd "$(dirname "$0")/.." || exit 2
seeds=3 targets="xla-cpu builtin" cuts=0 segs=0 dir=/work/models models=() pi=
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds=$2; shift ;;
    --targets) targets=$2; shift ;;
    --cuts) cuts=1 ;;
    --segs) segs=1 ;;
    --per-instruction|--per-instruction=all|--per-instruction=chains) pi=$1 ;;
    --dir) dir=$2; shift ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    -*) echo "model_check.sh: unknown option $1" >&2; exit 2 ;;
    *) models+=("$1") ;;
  esac
  shift
done
[ ${#models[@]} -gt 0 ] || models=(resnet50 dlrm)
PY=.venv/bin/python
[ -x build/trench ] || { echo "model_check.sh: build/trench missing (run make)" >&2; exit 2; }
[ -x $PY ] || { echo "model_check.sh: .venv missing (scripts/venv.sh)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private copy of the binary, so a rebuild during the run cannot change it
# (TRENCH_HOME: where it finds adapters/, .venv and profiles/).
cp build/trench "$tmp/trench" || exit 2
T=$tmp/trench
export TRENCH_HOME=$PWD

# isfile MODEL: a module file given as it is (FILE.hlo), not a models.py name
isfile() { case "$1" in *.hlo) return 0 ;; *) return 1 ;; esac; }
# modfile MODEL: the module a MODEL names
modfile() { if isfile "$1"; then echo "$1"; else echo "$dir/$1.pre.hlo"; fi; }
for m in "${models[@]}"; do
  if isfile "$m"; then
    [ -f "$m" ] || { echo "model_check.sh: $m missing" >&2; exit 2; }
    continue
  fi
  if [ ! -f "$dir/$m.pre.hlo" ] || [ ! -f "$dir/$m.inputs/params.txt" ]; then
    $PY bench/models.py --out "$dir" --seeds "$seeds" "$m" || exit 2
  fi
done

# inputs MODEL SEED: the --input arguments; seed S>0 replaces the data
# inputs by DIR/MODEL.inputs/seedS/pK.npy (the weights stay).
# A FILE.hlo model: the fill and drawn inputs of seed SEED (check adds
# --seeds 1 through cinputs).
inputs() {
  local d=$dir/$1.inputs n k
  if isfile "$1"; then
    d=${1%.hlo}.inputs
    printf -- '--fill-elided '
    [ -f "$d/params.txt" ] || { printf -- '--seed %s ' "$2"; return; }
  fi
  n=$(wc -l < "$d/params.txt")
  for ((k = 0; k < n; k++)); do
    if [ -f "$d/seed$2/p$k.npy" ]; then printf -- '--input %s ' "$d/seed$2/p$k.npy"
    else printf -- '--input %s ' "$d/p$k.npy"; fi
  done
}
cinputs() { inputs "$1" "$2"; isfile "$1" && [ ! -f "${1%.hlo}.inputs/params.txt" ] && printf -- '--seeds 1 '; }
now() { date +%s.%N; }
# check MODULE MODEL SEED TARGET [SAVE]: prints "judgement worst checked
# uncertain PI_VERDICT PI_JUDGED PI_MISMATCH PI_WEAK PI_EXCUSED SECONDS" (the
# per-instruction fields "-" without --per-instruction; SECONDS: the whole
# check's wall time)
check() {
  local save=() t0 t1
  [ $# -ge 5 ] && save=(--save "$5")
  t0=$(now)
  # shellcheck disable=SC2046
  $T check "$1" --target "$4" $(cinputs "$2" "$3") --json $cpi "${save[@]}" > "$tmp/c.json" 2> "$tmp/c.err"
  t1=$(now)
  python3 - "$tmp/c.json" "$(echo "$t1 - $t0" | bc -l)" <<'EOF'
import json, sys
secs = "%.1f" % float(sys.argv[2])
try:
    r = json.load(open(sys.argv[1]))
except Exception:  # trench itself failed: no report
    print("noreport - - - - - - - -", secs); sys.exit()
runs = r.get("runs", [])
pis = [run["per_instruction"] for run in runs if "per_instruction" in run]
if pis:
    p = pis[0]
    ex = ",".join(["%s=%d" % kv for kv in p.get("excused", {}).items()] +
                  ["narrowed:%s=%d" % kv for kv in p.get("narrowed", {}).items()]) or "-"
    pi = "%s %d %d %d %s" % (p.get("verdict"), p.get("checked", 0), p.get("mismatch", 0),
                             p.get("weak", 0), ex)
else:
    pi = "- - - - -"
outs = [o for run in runs for o in run.get("outputs", [])]
if not outs:
    v = runs[0].get("verdict", r.get("summary")) if runs else r.get("summary")
    print(v, "- - -", pi, secs); sys.exit()
print(r.get("summary"), max(o.get("worst_ratio", 0) for o in outs),
      sum(o.get("checked", 0) for o in outs), sum(o.get("uncertain", 0) for o in outs), pi, secs)
EOF
}

echo "trench model_check: $(date -u +%F\ %H:%M) UTC, $(nproc) CPUs, seeds $seeds, dumps in $dir"
printf '%-17s %6s %6s %8s %8s %7s  %-9s %-22s %9s %-17s' model instrs params exact_s shadow_s sh/ex \
  target verdicts worst_ratio checked/uncertain
[ -n "$pi" ] && printf ' %-22s %-20s %-9s %s' "per-instr${pi#--per-instruction}" judged/mismatch/weak check_s \
  'excused (instructions, by rule)'
echo
cpi=$pi # per-instruction in the main table only
for m in "${models[@]}"; do
  f=$(modfile "$m")
  read -r ni np < <($T stats --json "$f" | python3 -c \
    'import json,sys; d=json.load(sys.stdin)["files"][0]; print(d["instructions"], d["entry_parameters"])')
  # shellcheck disable=SC2046
  t0=$(now); $T run "$f" $(inputs "$m" 0) > "$tmp/ex.txt" 2>&1; rc1=$?
  # shellcheck disable=SC2046
  t1=$(now); $T run --shadow "$f" $(inputs "$m" 0) > "$tmp/sh.txt" 2>&1; rc2=$?
  t2=$(now)
  ex=$(echo "$t1 - $t0" | bc -l); sh=$(echo "$t2 - $t1" | bc -l)
  first=1
  for t in $targets; do
    verdicts="" worst=0 chk=0 unc=0 pv="" pj=0 pm=0 pw=0 secs="" pex=""
    for ((s = 0; s < seeds; s++)); do
      read -r v w c u pvs pjs pms pws pes ts < <(check "$f" "$m" $s "$t")
      verdicts="$verdicts${verdicts:+,}$v"
      [ "$w" != - ] && worst=$(python3 -c "print(max($worst, $w))") && chk=$((chk + c)) && unc=$((unc + u))
      pv="$pv${pv:+,}$pvs" secs="$secs${secs:+,}$ts" pex="$pex${pex:+ }$pes"
      [ "$pjs" != - ] && pj=$((pj + pjs)) && pm=$((pm + pms)) && pw=$((pw + pws))
    done
    if [ $first = 1 ]; then
      printf '%-17s %6s %6s %8.2f %8.2f %7.1f  ' "$(basename "$m" .hlo)" "$ni" "$np" "$ex" "$sh" "$(echo "$sh / $ex" | bc -l)"
    else
      printf '%-17s %6s %6s %8s %8s %7s  ' "" "" "" "" "" ""
    fi
    printf '%-9s %-22s %9.3g %-17s' "$t" "$verdicts" "$worst" "$chk/$unc"
    [ -n "$pi" ] && printf ' %-22s %-20s %-9s %s' "$pv" "$pj/$pm/$pw" "$secs" "$pex"
    echo
    first=0
  done
  [ $rc1 = 0 ] && [ $rc2 = 0 ] || { echo "  trench run failed:"; cat "$tmp/ex.txt" "$tmp/sh.txt"; }
  grep '^out' "$tmp/sh.txt" | sed 's/^/  /'
done

cpi=""
# bound MODULE NAME: "max_bound/max|y|" of seed 0's output 0 in shadow mode
bound() {
  # shellcheck disable=SC2046
  $T run --shadow "$1" $(inputs "$2" 0) 2>/dev/null | python3 -c '
import re, sys
t = sys.stdin.read()
m = re.search(r"^out0: \S+ min=(\S+) max=(\S+)", t, re.M)
b = re.search(r"^out0: shadow max_bound=(\S+) uncertain=(\d+)/(\d+)", t, re.M)
if not (m and b) or b.group(2) == b.group(3):
    print("-")
else:
    print("%.3g" % (float(b.group(1)) / max(abs(float(m.group(1))), abs(float(m.group(2))))))'
}

# row LABEL NAME MODULE: one check line per target over the seeds
row() {
  local t s v w c u verdicts worst chk unc first=1 b
  b=$(bound "$3" "$2")
  for t in $targets; do
    verdicts="" worst=0 chk=0 unc=0
    for ((s = 0; s < seeds; s++)); do
      read -r v w c u _ < <(check "$3" "$2" $s "$t")
      verdicts="$verdicts${verdicts:+,}$v"
      [ "$w" != - ] && worst=$(python3 -c "print(max($worst, $w))") && chk=$((chk + c)) && unc=$((unc + u))
    done
    printf '%-24s %-9s %-22s %11.3g %-17s %s\n' "$([ $first = 1 ] && echo "$1")" "$t" "$verdicts" \
      "$worst" "$chk/$unc" "$([ $first = 1 ] && echo "$b")"
    first=0
  done
}

if [ $segs = 1 ]; then
  echo
  echo "segments: each model cut into shallow modules fed the previous segment's output"
  echo "(bound/|y|: the largest shadow bound over the largest |value|, seed 0)"
  printf '%-24s %-9s %-22s %11s %-17s %s\n' segment target verdicts worst_ratio checked/uncertain \
    'bound/|y|'

  for m in "${models[@]}"; do
    isfile "$m" && continue
    for g in $($PY bench/models.py list segs "$m"); do
      row "$m:$g" "$m.seg-$g" "$dir/$m.seg-$g.pre.hlo"
    done
  done
fi

[ $cuts = 1 ] || exit 0
t=${targets%% *}
echo
echo "depth: $t, seed 0. max_bound: largest shadow bound; max|y|: largest |value|;"
echo "errors of the shadow value (rounded to f32), trench's exact mode and $t"
echo "against an f64 evaluation of the same module by jax"
printf '%-22s %-6s %10s %10s %9s %9s %9s %9s\n' cut verdict worst_ratio max_bound 'max|y|' \
  shadow_err exact_err "${t}_err"
for m in "${models[@]}"; do
  isfile "$m" && continue
  for c in $($PY bench/models.py list cuts "$m") ""; do
    f=$dir/$m${c:+.cut-$c}.pre.hlo
    read -r v w _ _ < <(check "$f" "$m" 0 "$t" "$tmp/b")
    # shellcheck disable=SC2046
    b=$($T run --shadow "$f" $(inputs "$m" 0) --out "$tmp/r" 2>/dev/null |
        sed -n 's/.*max_bound=\([^ ]*\).*/\1/p' | head -1)
    cp "$tmp/r/out0.npy" "$tmp/b/exact0.npy" 2>/dev/null
    # The bundle's ref0.npy is the exact-mode result (= exact0); the
    # shadow column wants the shadow value, shadow0.npy, which
    # models.py errors reads under the name ref0.
    cp "$tmp/b/shadow0.npy" "$tmp/b/ref0.npy" 2>/dev/null
    read -r y se ee te < <($PY bench/models.py errors "$m" "$tmp/b" ${c:+--cut "$c"} 2>/dev/null |
      awk '/f64 max/ {y = $NF} /ref0/ {r = $3} /exact0/ {e = $3} /target0/ {t = $3}
           END {print y, r, e, t}')
    rm -rf "$tmp/b" "$tmp/r"
    printf '%-22s %-6s %10.3g %10s %9s %9s %9s %9s\n' "$m${c:+:$c}" "$v" "$w" "$b" "$y" "$se" "$ee" "$te"
  done
done
