#!/usr/bin/env bash
# defect_bench.sh - how well `trench check` finds the planted defects of
# src/comp/defects.def. For every registry entry it prints one row:
#   defect, category;
#   trigger: the check on tests/defects/NAME.hlo with builtin:inject=NAME
#     over up to SEEDS input seeds: "seed K" (K+1 seeds were needed),
#     "missed", or "none" (no trigger module);
#   touched: corpus modules whose compiled C changes with the defect (the
#     defect's condition occurs in them; the others cannot be affected);
#   broken: of those, the modules where `trench check --seeds 2` finds a
#     mismatch, by name.
# The corpus is tests/hlo, tests/eval and examples. Before the table, the
# uninjected compiler is checked on the same corpus (a finding there is a
# compiler bug, not a defect).
#
# Usage: bench/defect_bench.sh [BUILD_DIR] [--seeds N] [--only NAME]
#   BUILD_DIR  the build folder holding trench (default: build)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=build
if [ $# -gt 0 ] && [ -x "$1/trench" ]; then build=$1; shift; fi
seeds=8
only=
while [ $# -gt 0 ]; do
  case $1 in
    --seeds) seeds=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    *) echo "defect_bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
cd "$root"
trench="$build/trench"
[ -x "$trench" ] || { echo "defect_bench.sh: $trench missing; run make first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private copy: a rebuild of the shared build folder mid-run must not
# show up as compile errors.
cp "$trench" "$tmp/trench" && trench="$tmp/trench"
export TRENCH_HOME=${TRENCH_HOME:-$root}
# libtcc compiles in milliseconds; the defects do not depend on the backend.
opts=jit=tcc
"$trench" check tests/defects/emit-tail-mask-short.safe.hlo --target "builtin:$opts" --seeds 1 >/dev/null 2>&1 ||
  opts=

corpus=$(ls tests/hlo/*.hlo tests/eval/*.hlo examples/*.hlo 2>/dev/null)
# Baseline C of every corpus module the compiler takes.
ok_mods=
nskip=0
for f in $corpus; do
  key=$(echo "$f" | tr '/' '_')
  if "$trench" compile "$f" -o "$tmp/$key.c" >/dev/null 2>&1; then ok_mods="$ok_mods $f"; else nskip=$((nskip + 1)); fi
done
nmods=$(echo $ok_mods | wc -w)
echo "defect_bench: $(nproc) CPUs; corpus: $nmods modules compiled ($nskip not compiled: unsupported or invalid)"

spec() { if [ -n "$opts" ]; then echo "builtin:$opts${1:+,$1}"; else echo "builtin${1:+:$1}"; fi; }

# The uninjected compiler on the corpus.
base_bad=
for f in $ok_mods; do
  "$trench" check "$f" --target "$(spec)" --seeds 2 >/dev/null 2>&1
  [ $? = 1 ] && base_bad="$base_bad $(basename "$f" .hlo)"
done
echo "uninjected builtin on the corpus (2 seeds): ${base_bad:-no findings}"
echo

names=$(sed -n 's/^X([A-Z0-9_]*, *"\([^"]*\)", *\([a-z]*\),.*/\1 \2/p' src/comp/defects.def)
printf '%-44s %-10s %-9s %7s  %s\n' defect category trigger touched "broken (corpus modules where check finds it)"
ndef=0 ntrig=0 ncorp=0
while read -r n cat; do
  [ -n "$n" ] || continue
  [ -z "$only" ] || [ "$only" = "$n" ] || continue
  ndef=$((ndef + 1))
  trig=none
  if [ -e "tests/defects/$n.hlo" ]; then
    out=$("$trench" check "tests/defects/$n.hlo" --target "$(spec "inject=$n")" --seeds "$seeds" 2>&1)
    k=$(printf '%s\n' "$out" | sed -n 's/^seed \([0-9]*\) .*mismatch.*/\1/p' | head -1)
    if [ -n "$k" ]; then trig="seed $k"; ntrig=$((ntrig + 1)); else trig=missed; fi
  fi
  touched=0
  broken=
  for f in $ok_mods; do
    key=$(echo "$f" | tr '/' '_')
    "$trench" compile "$f" --inject "$n" -o "$tmp/inj.c" >/dev/null 2>&1 || { touched=$((touched + 1)); broken="$broken $(basename "$f" .hlo)(compile-error)"; continue; }
    cmp -s "$tmp/inj.c" "$tmp/$key.c" && continue
    touched=$((touched + 1))
    "$trench" check "$f" --target "$(spec "inject=$n")" --seeds 2 >/dev/null 2>&1
    [ $? = 1 ] && broken="$broken $(basename "$f" .hlo)"
  done
  [ -n "$broken" ] && ncorp=$((ncorp + 1))
  printf '%-44s %-10s %-9s %7s  %s\n' "$n" "$cat" "$trig" "$touched" "${broken:- -}"
done <<EOF
$names
EOF
echo
echo "defects: $ndef; found on their trigger module within $seeds seeds: $ntrig; found on at least one corpus module: $ncorp"
