#!/usr/bin/env bash
# Installs the Debian packages trench needs to build and test, only when one
# is missing. Called by the Makefile and by .ci/run; safe to run again.
set -eu
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for p in gcc make libcjson-dev pkg-config; do
  have_pkg "$p" || need+=("$p")
done
# libtcc-dev is the JIT's fast backend (libtcc.a); tcc ships the runtime
# libtcc1.a and the compiler headers (stddef.h, ...) that libtcc needs.
# make TCC=0 builds without them.
if [ "${TRENCH_DEPS_TCC:-1}" != 0 ]; then
  for p in libtcc-dev tcc; do have_pkg "$p" || need+=("$p"); done
fi
# LLVM 14's C API, clang 14 (kernels to LLVM IR) and Z3's C API: trench verify.
for p in llvm-14-dev clang-14 libz3-dev; do have_pkg "$p" || need+=("$p"); done
# clang and its runtime give the sanitizer build and the coverage-guided fuzzer.
if [ "${TRENCH_DEPS_FUZZ:-0}" = 1 ]; then
  for p in clang libclang-rt-dev; do have_pkg "$p" || need+=("$p"); done
fi
# Slurm on one node (tests/slurm.sh): controller, node daemon, munge.
if [ "${TRENCH_DEPS_SLURM:-0}" = 1 ]; then
  for p in slurm-wlm munge; do have_pkg "$p" || need+=("$p"); done
fi
[ ${#need[@]} -eq 0 ] && exit 0
echo "deps: installing ${need[*]}" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >&2 || true
$SUDO apt-get install -y -qq "${need[@]}" >&2
