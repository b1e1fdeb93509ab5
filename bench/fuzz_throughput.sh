#!/usr/bin/env bash
# fuzz_throughput.sh - the fuzzer's checking loop in tests per CPU-second:
# the same generated campaign (`trench fuzz --no-corpus --gen-size N
# --count C --seed S --jobs 1`) against builtin:jit=tcc and, as the
# baseline of the same run, against interp (the reference interpreter as
# a target: same generation, inputs, reference and judging, no compile
# and no forked run). CPU is user + system of the whole process tree
# (campaign worker and the built-in target's runners included), so the
# figures hold on a loaded machine; the load average is printed.
#
# Usage: bench/fuzz_throughput.sh [BUILD_DIR] [--count C] [--size N]
#                                 [--seed S] [--base BIN]
#   --base BIN  also run the builtin campaign with another trench binary
#               (an older build) and print new/old
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=build
if [ $# -gt 0 ] && [ -x "$1/trench" ]; then build=$1; shift; fi
count=300
size=20
seed=7
base=
while [ $# -gt 0 ]; do
  case $1 in
    --count) count=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    *) echo "fuzz_throughput.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
case $build in /*) ;; *) build=$root/$build ;; esac
bin=$build/trench
[ -x "$bin" ] || { echo "fuzz_throughput.sh: no $bin (make first)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/trench-fuzzbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export TRENCH_HOME=$root

# run NAME BIN TARGET: prints "NAME tests cpu_s tests_per_cpu_s weak%"
run() {
  local name=$1 prog=$2 target=$3 out=$tmp/$1 t
  TIMEFORMAT='%U %S'
  t=$( { time "$prog" fuzz --target "$target" --no-corpus --gen-size "$size" --count "$count" \
           --seed "$seed" --jobs 1 --quiet --out "$out" >/dev/null 2>&1; } 2>&1 )
  python3 - "$name" "$out/summary.json" $t <<'EOF'
import json, sys
name, path, user, sys_ = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
s = json.load(open(path))
judged = s["pass"] + s["weak"] + s["findings"]
cpu = user + sys_
print(f"{name:10s} tests {s['tests']:5d}  cpu {cpu:7.2f} s (user {user:.2f} sys {sys_:.2f})  "
      f"{s['tests'] / cpu:7.1f} tests/cpu-s  weak {100 * s['weak'] / max(judged, 1):.1f}%  "
      f"findings {s['findings']}")
EOF
}

echo "load: $(cut -d' ' -f1-3 /proc/loadavg); $count tests of --gen-size $size, seed $seed, 1 job"
r_new=$(run builtin "$bin" builtin:jit=tcc); echo "$r_new"
r_int=$(run interp "$bin" interp); echo "$r_int"
rate() { echo "$1" | sed 's/.* \([0-9.]*\) tests\/cpu-s.*/\1/'; }
awk -v a="$(rate "$r_new")" -v b="$(rate "$r_int")" \
  'BEGIN { printf "builtin/interp: %.2f (the target'"'"'s compile and run cost over the reference alone)\n", a / b }'
if [ -n "$base" ]; then
  r_old=$(run base "$base" builtin:jit=tcc); echo "$r_old"
  awk -v a="$(rate "$r_new")" -v b="$(rate "$r_old")" 'BEGIN { printf "new/base: %.2f\n", a / b }'
fi
