#!/usr/bin/env bash
# parse_corpus.sh - how well does trench read a folder of real HLO text dumps?
#
# Usage: bench/parse_corpus.sh [-v] [-s] [-t SECONDS] DIR
#   DIR         a folder; every file under it whose name ends in .hlo is read
#               (recursively, in sorted order)
#   -v          also print one "ok" line per file that passes every stage
#   -s          split lit-test files that hold several modules separated by
#               lines "// -----" and read each part as a file of its own,
#               named FILE#partN (N from 1) in the output
#   -t SECONDS  per-command time limit (default 120); a command that runs
#               longer counts as a failure of its stage ("timeout")
#   TRENCH=PATH the trench binary (default: build/trench next to this script)
#
# For each file four stages run, each a separate trench process:
#   parse      trench parse -q --no-verify FILE     (timed: the throughput)
#   verify     trench parse -q FILE                 (parse + verifier)
#   print      trench parse --no-verify FILE > P1   (canonical text)
#   roundtrip  trench parse --no-verify P1 > P2, then P1 and P2 must be
#              byte-identical (print . parse . print is a fixpoint)
# verify and roundtrip run only on files that parsed; they are judged
# independently (a file can fail both).
#
# Output, one line per failing (file, stage), tab-separated:
#   FAIL<TAB>stage<TAB>file<TAB>first diagnostic line (or first differing
#   line for a roundtrip mismatch, or "crash: signal N" / "timeout")
# then a summary block:
#   files, parsed OK, verified OK, round-tripped OK, total MB (of all files),
#   parse time (sum over parsed files) and MB/s parse throughput (MB of the
#   parsed files / their parse time; includes process start-up, so it is a
#   lower bound, most visible on folders of many small files), the same
#   over the parsed files of 100 kB and more, and the largest file's MB/s.
# Exit status: 0 when every file passes every stage, 1 otherwise, 2 on a
# usage error. Without -s a lit test holding several modules separated by
# "// -----" fails as one file.
set -u
export LC_ALL=C

here=$(cd "$(dirname "$0")" && pwd)
trench=${TRENCH:-$here/../build/trench}
verbose=0
split=0
limit=120
while getopts "vst:h" opt; do
  case $opt in
    v) verbose=1 ;;
    s) split=1 ;;
    t) limit=$OPTARG ;;
    h) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "usage: $0 [-v] [-s] [-t SECONDS] DIR" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -ne 1 ] || [ ! -d "$1" ]; then
  echo "usage: $0 [-v] [-s] [-t SECONDS] DIR" >&2
  exit 2
fi
dir=$1
if [ ! -x "$trench" ]; then
  echo "$0: no trench binary at $trench (build it, or set TRENCH)" >&2
  exit 2
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/parse_corpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

now_us() { local t=${EPOCHREALTIME/./}; echo "${t#0}"; }

# run STAGE OUTFILE CMD...: runs CMD with stdout to OUTFILE, stderr to
# $tmp/err; sets rc and why (the first diagnostic line when rc != 0).
run() {
  local out=$1; shift
  timeout -k 5 "$limit" "$@" >"$out" 2>"$tmp/err"
  rc=$?
  why=""
  if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
    why="timeout after ${limit}s"
  elif [ $rc -gt 128 ]; then
    why="crash: signal $((rc - 128)) $(grep -m1 -v '^\s*$' "$tmp/err")"
  elif [ $rc -ne 0 ]; then
    why=$(grep -m1 -E 'error|warning' "$tmp/err" || true)
    [ -n "$why" ] || why=$(grep -m1 -v '^\s*$' "$tmp/err" || true)
    [ -n "$why" ] || why="exit $rc, no message"
  fi
}

fail() { printf 'FAIL\t%s\t%s\t%s\n' "$1" "$2" "$3"; }

# Emits "NAME\0PATH\0" for every file to read: NAME is what the output
# shows, PATH what trench reads (a part in $tmp/split with -s).
list_files() {
  local f n=0 k
  while IFS= read -r -d '' f; do
    if [ $split = 1 ] && grep -qE '^// -----[[:space:]]*$' "$f"; then
      n=$((n + 1))
      mkdir -p "$tmp/split/$n"
      awk -v out="$tmp/split/$n/part" '
        BEGIN { k = 1; file = out k ".hlo"; printf "" > file }
        /^\/\/ -----[ \t\r]*$/ { close(file); k++; file = out k ".hlo";
                                printf "" > file; next }
        { print > file }' "$f"
      k=1
      while [ -f "$tmp/split/$n/part$k.hlo" ]; do
        printf '%s#part%d\0%s\0' "$f" "$k" "$tmp/split/$n/part$k.hlo"
        k=$((k + 1))
      done
    else
      printf '%s\0%s\0' "$f" "$f"
    fi
  done < <(find "$dir" -name '*.hlo' \( -type f -o -type l \) -print0 | sort -z)
}

nfiles=0 nparse=0 nverify=0 nround=0
total_bytes=0 parsed_bytes=0 parse_us=0
big_file="" big_bytes=-1 big_us=0
large_bytes=0 large_us=0 nlarge=0 # files of 100 kB and more

while IFS= read -r -d '' name && IFS= read -r -d '' f; do
  nfiles=$((nfiles + 1))
  bytes=$(stat -c %s "$f")
  total_bytes=$((total_bytes + bytes))
  ok=1

  t0=$(now_us)
  run /dev/null "$trench" parse -q --no-verify "$f"
  t1=$(now_us)
  if [ $rc -ne 0 ]; then
    fail parse "$name" "${why//"$f"/$name}"
    continue
  fi
  nparse=$((nparse + 1))
  parsed_bytes=$((parsed_bytes + bytes))
  parse_us=$((parse_us + t1 - t0))
  if [ "$bytes" -ge 100000 ]; then
    nlarge=$((nlarge + 1)) large_bytes=$((large_bytes + bytes))
    large_us=$((large_us + t1 - t0))
  fi
  if [ "$bytes" -gt "$big_bytes" ]; then
    big_file=$name big_bytes=$bytes big_us=$((t1 - t0))
  fi

  run /dev/null "$trench" parse -q "$f"
  if [ $rc -ne 0 ]; then
    fail verify "$name" "${why//"$f"/$name}"
    ok=0
  else
    nverify=$((nverify + 1))
  fi

  run "$tmp/p1.hlo" "$trench" parse --no-verify "$f"
  if [ $rc -ne 0 ]; then
    fail roundtrip "$name" "print: ${why//"$f"/$name}"
    continue
  fi
  run "$tmp/p2.hlo" "$trench" parse --no-verify "$tmp/p1.hlo"
  if [ $rc -ne 0 ]; then
    fail roundtrip "$name" "reparse of printed text: ${why//"$tmp/p1.hlo"/<printed>}"
    continue
  fi
  if ! cmp -s "$tmp/p1.hlo" "$tmp/p2.hlo"; then
    d=$(diff "$tmp/p1.hlo" "$tmp/p2.hlo" | grep -m2 -E '^[<>]' | cut -c1-300 |
        tr '\n' ' ')
    fail roundtrip "$name" "print differs after reparse: $d"
    continue
  fi
  nround=$((nround + 1))
  [ $ok = 1 ] && [ $verbose = 1 ] && printf 'ok\t%s\n' "$name"
done < <(list_files)

awk -v n="$nfiles" -v p="$nparse" -v v="$nverify" -v r="$nround" \
    -v tb="$total_bytes" -v pb="$parsed_bytes" -v us="$parse_us" \
    -v bf="$big_file" -v bb="$big_bytes" -v bus="$big_us" \
    -v nl="$nlarge" -v lb="$large_bytes" -v lus="$large_us" '
function pc(k) { return n ? sprintf("%.1f%%", 100 * k / n) : "-" }
BEGIN {
  printf "files:             %d\n", n
  printf "parsed OK:         %d (%s)\n", p, pc(p)
  printf "verified OK:       %d (%s)\n", v, pc(v)
  printf "round-tripped OK:  %d (%s)\n", r, pc(r)
  printf "total MB:          %.3f (parsed: %.3f)\n", tb / 1e6, pb / 1e6
  printf "parse time:        %.3f s (sum over parsed files, incl. process start)\n", us / 1e6
  printf "parse throughput:  %s MB/s\n", (us > 0 ? sprintf("%.2f", pb / us) : "-")
  if (nl > 0)
    printf "files >= 100 kB:   %d, %.3f MB, %s MB/s\n", nl, lb / 1e6,
           (lus > 0 ? sprintf("%.2f", lb / lus) : "-")
  if (bb >= 0)
    printf "largest parsed:    %s (%.3f MB, %.3f s, %s MB/s)\n", bf, bb / 1e6,
           bus / 1e6, (bus > 0 ? sprintf("%.2f", bb / bus) : "-")
}'
[ "$nfiles" -eq "$nround" ] && [ "$nfiles" -eq "$nverify" ]
