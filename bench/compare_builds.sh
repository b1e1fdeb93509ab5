#!/usr/bin/env bash
# compare_builds.sh - evaluates every module of the given folders with two
# trench binaries (`trench run --shadow --out`) and compares what they give
# byte for byte: exit code, stdout, stderr and every .npy written (inputs,
# exact outputs, shadow values, bounds and marks), and the C the built-in
# compiler emits (`trench compile --emit c`). For refactorings of the
# interpreter, the op table or the emitter that must not change a bit.
# Usage: bash bench/compare_builds.sh [--no-emit] OLD_TRENCH NEW_TRENCH [DIR...]
# (--no-emit: the interpreter alone, for builds whose compilers differ)
# (default folders: tests/hlo tests/eval examples tests/xla-suite). Each
# run gets --ref-timeout 60; a module both builds time out on counts as
# compared. Prints one line per difference and "N modules, N differ".
set -u
emit=1
[ "${1:-}" = --no-emit ] && { emit=0; shift; }
old=${1:?usage: compare_builds.sh OLD NEW [DIR...]}
new=${2:?usage: compare_builds.sh OLD NEW [DIR...]}
shift 2
dirs=("$@")
[ ${#dirs[@]} = 0 ] && dirs=(tests/hlo tests/eval examples tests/xla-suite)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
differ=0
for d in "${dirs[@]}"; do
  if [ ! -d "$d" ] || [ -z "$(find "$d" -name '*.hlo' -print -quit)" ]; then
    echo "missing or empty folder: $d"
    differ=$((differ + 1))
    continue
  fi
  while IFS= read -r f; do
    n=$((n + 1))
    rm -rf "$tmp/a" "$tmp/b"
    "$old" run --shadow --ref-timeout 60 --out "$tmp/a" "$f" >"$tmp/a.out" 2>"$tmp/a.err"
    echo "rc=$?" >>"$tmp/a.out"
    "$new" run --shadow --ref-timeout 60 --out "$tmp/b" "$f" >"$tmp/b.out" 2>"$tmp/b.err"
    echo "rc=$?" >>"$tmp/b.out"
    why=""
    cmp -s "$tmp/a.out" "$tmp/b.out" || why="stdout"
    cmp -s "$tmp/a.err" "$tmp/b.err" || why="$why stderr"
    if [ "$emit" = 1 ]; then
      "$old" compile --emit c "$f" >"$tmp/a.c" 2>&1
      echo "rc=$?" >>"$tmp/a.c"
      "$new" compile --emit c "$f" >"$tmp/b.c" 2>&1
      echo "rc=$?" >>"$tmp/b.c"
      cmp -s "$tmp/a.c" "$tmp/b.c" || why="$why emitted-C"
    fi
    if [ -d "$tmp/a" ] || [ -d "$tmp/b" ]; then
      la=$(cd "$tmp/a" 2>/dev/null && ls)
      lb=$(cd "$tmp/b" 2>/dev/null && ls)
      if [ "$la" != "$lb" ]; then
        why="$why files"
      else
        for x in $la; do cmp -s "$tmp/a/$x" "$tmp/b/$x" || why="$why $x"; done
      fi
    fi
    if [ -n "$why" ]; then
      differ=$((differ + 1))
      echo "DIFF $f:$why"
    fi
  done < <(find "$d" -name '*.hlo' | sort)
done
echo "$n modules, $differ differ"
[ "$differ" = 0 ]
