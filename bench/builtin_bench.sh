#!/usr/bin/env bash
# builtin_bench.sh - builds bench/builtin_bench.c against BUILD/libtrench-internal.a
# and runs it; `make bench-builtin` calls this. Prints (a) compile latency
# with cc -O2 and libtcc, (b) run time of builtin against the reference
# interpreter and (c) XLA CPU when .venv exists (scripts/venv.sh).
#
# Usage: bench/builtin_bench.sh [BUILD_DIR] [builtin_bench arguments...]
#   BUILD_DIR  the build folder holding libtrench-internal.a (default: build)
#   arguments  --reps N, --compile-reps N, --quick, --no-xla, --only NAME
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=build
if [ $# -gt 0 ] && [ -d "$1" ] && [ -f "$1/libtrench-internal.a" ]; then build=$1; shift; fi
cd "$root"
lib="$build/libtrench-internal.a"
[ -f "$lib" ] || { echo "builtin_bench.sh: $lib missing; run make first" >&2; exit 2; }
cc=${CC:-cc}
flags="-std=c11 -D_GNU_SOURCE -O2 -g -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes
  -Wmissing-prototypes -Wpointer-arith -Wformat=2 -Wvla -Wno-unused-parameter"
libs="-lcjson -lm -lpthread"
# libtrench-internal.a has the libtcc backend when built with TCC=1 (the default).
if nm "$lib" 2>/dev/null | grep -q ' U tcc_new'; then libs="$libs -ltcc -ldl"; flags="$flags -no-pie"; fi
out="$build/builtin_bench"
# shellcheck disable=SC2086
$cc $flags -o "$out" bench/builtin_bench.c "$lib" $libs
echo "builtin_bench: $(nproc) CPUs; cc: $($cc --version | head -1)"
# xla-cpu finds the adapter and the virtualenv under TRENCH_HOME.
TRENCH_HOME=${TRENCH_HOME:-$root} exec "$out" "$@"
