#!/usr/bin/env bash
# compare_check.sh - checks the same modules with two trench binaries
# (`trench check --json --target T`) and compares the reports byte for
# byte, and, for generated modules, what bench/compare_builds.sh compares
# (`run --shadow` outputs, bounds and marks, the emitted C). For
# refactorings of the interpreter core, the oracle or the op table that
# must not change a bit of any verdict.
# Usage: bash bench/compare_check.sh OLD_TRENCH NEW_TRENCH [--target T]
#          [--seeds N] [--gen N] [--gen-seed S] [DIR...]
# --gen N writes N modules (`OLD gen --seed S --count N`, S default 1000)
# to a scratch folder and compares them too. Default folders: tests/hlo
# tests/eval examples. Modules go to check in batches of 50 (one target
# process per batch). Prints one line per differing batch and
# "N modules in M batches, D differ".
set -u
old=${1:?usage: compare_check.sh OLD NEW [--target T] [--seeds N] [--gen N] [DIR...]}
new=${2:?usage: compare_check.sh OLD NEW [--target T] [--seeds N] [--gen N] [DIR...]}
shift 2
target=builtin
seeds=2
gen=0
gseed=1000
dirs=()
while [ $# -gt 0 ]; do
  case $1 in
    --target) target=$2; shift 2 ;;
    --seeds) seeds=$2; shift 2 ;;
    --gen) gen=$2; shift 2 ;;
    --gen-seed) gseed=$2; shift 2 ;;
    *) dirs+=("$1"); shift ;;
  esac
done
[ ${#dirs[@]} = 0 ] && [ "$gen" = 0 ] && dirs=(tests/hlo tests/eval examples)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
differ=0
if [ "$gen" -gt 0 ]; then
  mkdir "$tmp/gen"
  "$old" gen --seed "$gseed" --count "$gen" --out "$tmp/gen" >/dev/null || { echo "gen failed"; exit 1; }
  dirs+=("$tmp/gen")
  # The interpreter's own outputs and the emitted C, module by module.
  bash "$(dirname "$0")/compare_builds.sh" "$old" "$new" "$tmp/gen" | tail -n 20 | grep -v '^[0-9]* modules, 0 differ$'
  [ "${PIPESTATUS[0]}" = 0 ] || differ=$((differ + 1))
fi
: >"$tmp/list"
for d in "${dirs[@]}"; do
  if [ ! -d "$d" ] || [ -z "$(find "$d" -name '*.hlo' -print -quit)" ]; then
    echo "missing or empty folder: $d"
    differ=$((differ + 1))
    continue
  fi
  find "$d" -name '*.hlo' | sort >>"$tmp/list"
done
n=$(wc -l <"$tmp/list")
split -l 50 -d -a 4 "$tmp/list" "$tmp/batch."
b=0
for f in "$tmp"/batch.*; do
  b=$((b + 1))
  mapfile -t mods <"$f"
  "$old" check --json --target "$target" --seeds "$seeds" "${mods[@]}" >"$tmp/a.json" 2>"$tmp/a.err"
  echo "rc=$?" >>"$tmp/a.json"
  "$new" check --json --target "$target" --seeds "$seeds" "${mods[@]}" >"$tmp/b.json" 2>"$tmp/b.err"
  echo "rc=$?" >>"$tmp/b.json"
  why=""
  cmp -s "$tmp/a.json" "$tmp/b.json" || why="report"
  cmp -s "$tmp/a.err" "$tmp/b.err" || why="$why stderr"
  if [ -n "$why" ]; then
    differ=$((differ + 1))
    echo "DIFF batch of ${mods[0]} (${#mods[@]} modules):$why"
  fi
done
echo "$n modules in $b batches, $differ differ"
[ "$differ" = 0 ]
