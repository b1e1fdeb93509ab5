#!/usr/bin/env bash
# xla_tests_check.sh - trench check against xla-cpu over real modules from
# XLA's own tests: no false alarm wanted (issue 11; docs/MODELS.md, "XLA's
# own test modules").
#
# Usage: bench/xla_tests_check.sh [-s SEEDS] [-t TIMEOUT] DIR [OUT]
#   DIR      a folder: every *.hlo under it is a module (files of XLA's lit
#            tests holding several modules separated by "// -----" are
#            split, as bench/xla_hlo_corpus.sh does); every *.cc under it
#            is a C++ test file whose modules bench/xla_test_modules.py
#            pulls out.
#   OUT      where the modules, the JSONL log and the counts go
#            (default: a fresh folder under /tmp)
#   -s N     seeds per module (default 3)
#   -t S     per-run timeout of the target in seconds (default 60)
#   TRENCH=PATH  the trench binary (default build/trench)
#   PYTHON=PATH  python for the extraction (default .venv/bin/python, then
#                python3)
#
# All modules go to one `trench check --target xla-cpu` call (one adapter
# process) with --log OUT/check.jsonl. Printed: the count of each module
# verdict (pass, weak, unsupported, declined, finding, ...), then one line
# per module that is neither pass nor weak: "VERDICT<TAB>module<TAB>why",
# the first seed's message. Exit status: 0 when no module is a finding,
# 1 otherwise, 2 on a usage error.
set -u
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
trench=${TRENCH:-$here/../build/trench}
python=${PYTHON:-$here/../.venv/bin/python}
[ -x "$python" ] || python=python3
seeds=3 timeout=60
while getopts "s:t:" o; do
  case $o in
    s) seeds=$OPTARG ;;
    t) timeout=$OPTARG ;;
    *) echo "usage: $0 [-s SEEDS] [-t TIMEOUT] DIR [OUT]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ ! -d "$1" ]; then
  echo "usage: $0 [-s SEEDS] [-t TIMEOUT] DIR [OUT]" >&2
  exit 2
fi
[ -x "$trench" ] || { echo "$0: no trench binary at $trench" >&2; exit 2; }
src=$1
out=${2:-$(mktemp -d /tmp/xla_tests_check.XXXXXX)}
mkdir -p "$out/modules"

# .hlo files, split at "// -----" into one module per part.
n=0
while IFS= read -r f; do
  base=$(basename "$f" .hlo)
  awk -v dir="$out/modules" -v base="$base" '
    BEGIN { part = 1; out = dir "/" base ".hlo" }
    /^\/\/ -----/ { close(out); part++; out = dir "/" base ".part" part ".hlo"; next }
    { print > out }' "$f"
  n=$((n + 1))
done < <(find "$src" -name '*.hlo' -type f | sort)
# Parts with no instruction (a trailing separator) are dropped.
for p in "$out/modules"/*.hlo; do
  [ -e "$p" ] || continue
  grep -q ' = ' "$p" || rm -f "$p"
done
# C++ test files.
if find "$src" -name '*.cc' -type f | grep -q .; then
  "$python" "$here/xla_test_modules.py" "$src" "$out/modules" > "$out/cc-modules.tsv" || true
fi
ls "$out/modules"/*.hlo >/dev/null 2>&1 || { echo "$0: no modules under $src" >&2; exit 2; }

rm -f "$out/check.jsonl"
find "$out/modules" -name '*.hlo' | sort > "$out/list"
echo "modules: $(wc -l < "$out/list") (from $n .hlo files and $(find "$src" -name '*.cc' | wc -l) .cc files; folder $out)"
t0=$(date +%s)
xargs -d '\n' nice "$trench" check --target xla-cpu --seeds "$seeds" \
  --timeout "$timeout" --log "$out/check.jsonl" < "$out/list" > "$out/check.out" 2>&1
t1=$(date +%s)
echo "wall: $((t1 - t0)) s; load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$python" - "$out/check.jsonl" <<'EOF'
import json, sys, collections
counts = collections.Counter()
odd = []
for line in open(sys.argv[1]):
    d = json.loads(line)
    v = d.get("summary", "?")
    counts[v] += 1
    if v not in ("pass", "weak"):
        why = ""
        for r in d.get("runs", []):
            why = r.get("message") or r.get("verdict", "")
            for o in r.get("outputs", []):
                if o.get("judgement") not in ("pass", "weak"):
                    why = "%s: %s" % (o.get("judgement"), o.get("note", ""))
            if why:
                break
        odd.append("%s\t%s\t%s" % (v, d.get("module"), " ".join(str(why).split())[:200]))
for k in sorted(counts):
    print("%s: %d" % (k, counts[k]))
for l in odd:
    print(l)
sys.exit(1 if any(k not in ("pass", "weak", "unsupported", "declined") for k in counts) else 0)
EOF
