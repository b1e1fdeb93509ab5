#!/usr/bin/env bash
# run_eval_bench.sh - builds bench/eval_bench.c against BUILD/libtrench-internal.a
# and runs it; `make bench` calls this.
#
# Usage: bench/run_eval_bench.sh [BUILD_DIR] [eval_bench arguments...]
#   BUILD_DIR  the build folder holding libtrench-internal.a (default: build)
#   arguments  passed on, e.g. --reps 9, --quick, or a folder of .hlo dumps
#              (inputs from DIR/NAME.inputs/p0.npy, p1.npy, ... where they
#              exist, drawn otherwise; see bench/README.md)
#
# Shadow mode is compiled in when src/eval/shadow.h exists and the bench's
# shadow call compiles against it; otherwise the bench runs exact mode only
# and says so. TRENCH_THREADS=1 in the environment measures one thread.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=build
if [ $# -gt 0 ] && [ -d "$1" ] && [ -f "$1/libtrench-internal.a" ]; then build=$1; shift; fi
cd "$root"
lib="$build/libtrench-internal.a"
[ -f "$lib" ] || { echo "run_eval_bench.sh: $lib missing; run make first" >&2; exit 2; }
cc=${CC:-cc}
flags="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
  -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla -Wno-unused-parameter"
libs="-lcjson -lm -lpthread"
out="$build/eval_bench"
# shellcheck disable=SC2086
if [ -f src/eval/shadow.h ] &&
   $cc $flags -DBENCH_SHADOW -o "$out" bench/eval_bench.c "$lib" $libs 2>/dev/null; then
  echo "eval_bench: exact and shadow mode"
else
  echo "eval_bench: exact mode only (no usable src/eval/shadow.h)"
  $cc $flags -o "$out" bench/eval_bench.c "$lib" $libs
fi
echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ //')"
exec "$out" "$@"
