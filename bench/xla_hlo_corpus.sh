#!/usr/bin/env bash
# xla_hlo_corpus.sh - does trench's parser take every module XLA's parser
# takes? Runs over a folder of .hlo files (e.g. the .hlo test files of
# XLA's own repository).
#
# Usage: bench/xla_hlo_corpus.sh [-v] DIR
#   DIR   a folder; every file under it whose name ends in .hlo is read.
#         A file holding several modules separated by lines "// -----"
#         (XLA's lit tests, run with --split-input-file) is split and each
#         part counts as a module of its own (FILE#partN).
#   -v    also print one "ok" line per module trench parses
#   TRENCH=PATH  the trench binary (default build/trench)
#   PYTHON=PATH  a python with jax (default .venv/bin/python); without it
#                the XLA column is skipped
#
# For each module: `trench parse -q` (parse and verify) and XLA's own
# parser (bench/xla_hlo_accepts.py: XLA's parser without its verifier).
# Prints one line per module trench rejects: "REJECT<TAB>stage<TAB>
# xla=ok|reject<TAB>module<TAB>trench's first diagnostic", where stage is
# parse (the parser rejects it) or verify (it parses with --no-verify and
# trench's verifier rejects it: shapes or attributes XLA's shape rules
# reject too; see docs/HLO.md), then the counts: modules; trench parsed
# and verified; trench parsed with the verifier off; XLA parsed; and of
# the modules XLA parsed, how many trench parsed (verified, and verifier
# off). Exit status: 0 when trench's parser takes every module XLA's
# parser takes, 1 otherwise, 2 on a usage error or an empty folder.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
trench=${TRENCH:-$here/../build/trench}
python=${PYTHON:-$here/../.venv/bin/python}
verbose=0
if [ "${1:-}" = "-v" ]; then verbose=1; shift; fi
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 [-v] DIR" >&2
  exit 2
fi
[ -x "$trench" ] || { echo "$0: no trench binary at $trench" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Split into one file per module; the list keeps the display names.
: > "$tmp/list"
i=0
while IFS= read -r f; do
  if grep -q '^// -----' "$f"; then
    awk -v base="$tmp/m" -v start="$i" -v name="$f" -v list="$tmp/list" '
      BEGIN { part = 1; n = start; out = base n ".hlo"; print out "\t" name "#part1" >> list }
      /^\/\/ -----/ { close(out); part++; n++; out = base n ".hlo"; print out "\t" name "#part" part >> list; next }
      { print > out }
      END { close(out); print n + 1 > (base "count") }' "$f"
    touch "$tmp/m$i.hlo"
    i=$(cat "$tmp/mcount")
  else
    cp "$f" "$tmp/m$i.hlo"
    printf '%s\t%s\n' "$tmp/m$i.hlo" "$f" >> "$tmp/list"
    i=$((i + 1))
  fi
done < <(find "$1" -name '*.hlo' -type f | sort)
[ "$i" -gt 0 ] || { echo "$0: no .hlo files under $1" >&2; exit 2; }
# Parts that hold no module text at all (a trailing separator) are dropped.
: > "$tmp/list2"
while IFS=$'\t' read -r p name; do
  if grep -q '[A-Za-z]' "$p" && grep -qv '^[[:space:]]*//' "$p"; then
    printf '%s\t%s\n' "$p" "$name" >> "$tmp/list2"
  fi
done < "$tmp/list"

xla=0
if [ -x "$python" ] && "$python" -c 'import jax' 2>/dev/null; then
  cut -f1 "$tmp/list2" | xargs -d '\n' nice "$python" "$here/xla_hlo_accepts.py" > "$tmp/xla" 2>/dev/null
  xla=1
fi

total=0 ok=0 xok=0 both=0 nover=0 xnover=0
while IFS=$'\t' read -r p name; do
  total=$((total + 1))
  xs=unknown
  if [ $xla = 1 ]; then
    xs=$(awk -F'\t' -v p="$p" '$2 == p { print $1; exit }' "$tmp/xla")
    [ "$xs" = ok ] && xok=$((xok + 1))
  fi
  if msg=$(timeout 120 "$trench" parse -q "$p" 2>&1); then
    ok=$((ok + 1))
    [ "$xs" = ok ] && both=$((both + 1))
    [ $verbose = 1 ] && printf 'ok\t%s\n' "$name"
  else
    first=$(printf '%s\n' "$msg" | grep -m1 'error' | sed "s|$p|${name//|/\\|}|")
    stage=parse
    if timeout 120 "$trench" parse -q --no-verify "$p" >/dev/null 2>&1; then
      stage=verify
      nover=$((nover + 1))
      [ "$xs" = ok ] && xnover=$((xnover + 1))
    fi
    printf 'REJECT\t%s\txla=%s\t%s\t%s\n' "$stage" "$xs" "$name" "$first"
  fi
done < "$tmp/list2"
echo "modules: $total"
echo "trench parsed and verified: $ok"
echo "trench parsed (verifier off): $((ok + nover))"
if [ $xla = 1 ]; then
  echo "XLA parsed: $xok"
  echo "trench parsed and verified of XLA parsed: $both / $xok"
  echo "trench parsed (verifier off) of XLA parsed: $((both + xnover)) / $xok"
  [ "$((both + xnover))" = "$xok" ] || exit 1
fi
exit 0
