#!/usr/bin/env bash
# iree_throughput.sh - what the IREE adapter's kept compiler
# (adapters/iree/compile_server.py) saves: the same generated modules
# checked on iree-cpu twice in one run, once with an iree-compile process
# per module (the adapter's --no-compile-server, the baseline) and once
# with the kept compiler; CPU-seconds of trench and everything it starts
# (bash `times`: the children's user + system time), wall seconds, and
# the verdicts, which must be the same.
#
# Usage: bench/iree_throughput.sh [BUILD_DIR] [--count N] [--seed S]
#   N generated modules (30) from seed S (500), 2 input seeds each
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=$root/build
if [ $# -gt 0 ] && [ -x "$1/trench" ]; then build=$(cd "$1" && pwd); shift; fi
count=30
seed=500
while [ $# -gt 0 ]; do
  case $1 in
    --count) count=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    *) echo "usage: bench/iree_throughput.sh [BUILD_DIR] [--count N] [--seed S]" >&2; exit 2 ;;
  esac
done
py=$(bash "$root/scripts/venv-iree.sh" | tail -n 1)
[ -x "$py" ] || { echo "iree_throughput: no IREE virtualenv (scripts/venv-iree.sh)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/trench" gen --seed "$seed" --count "$count" --out "$tmp/mods" > /dev/null || exit 1
export TRENCH_HOME=$root
cd "$root" || exit 1

# one run: CPU-seconds (children of the subshell), wall seconds, summaries
measure() {
  local name=$1 target=$2
  local t0 t1
  t0=$(date +%s.%N)
  ( "$build/trench" check "$tmp"/mods/*.hlo --target "$target" --profile profiles/iree-cpu.conf \
      --seeds 2 --json > "$tmp/$name.json" 2> /dev/null
    times > "$tmp/$name.times" )
  t1=$(date +%s.%N)
  echo "$t0 $t1" > "$tmp/$name.wall"
}
measure baseline "cmd:$py adapters/iree/adapter.py --no-compile-server"
measure kept "cmd:$py adapters/iree/adapter.py"

"$root/.venv/bin/python" - "$tmp" "$count" "$(uptime)" <<'PY'
import json, re, sys
tmp, count, up = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def secs(s):
    m = re.match(r"(\d+)m([\d.]+)s", s)
    return int(m.group(1)) * 60 + float(m.group(2))
res = {}
for name in ("baseline", "kept"):
    lines = open("%s/%s.times" % (tmp, name)).read().split("\n")
    u, s = lines[1].split()  # the children's user and system time
    t0, t1 = map(float, open("%s/%s.wall" % (tmp, name)).read().split())
    reps = json.load(open("%s/%s.json" % (tmp, name)))
    reps = reps if isinstance(reps, list) else [reps]
    summ = {}
    for r in reps:
        summ[r.get("summary", "error")] = summ.get(r.get("summary", "error"), 0) + 1
    verdicts = [(r["module"], r.get("summary")) for r in reps]
    res[name] = (secs(u) + secs(s), t1 - t0, summ, verdicts)
    print("%-8s %7.1f CPU-s %7.1f s wall  %s" % (name, secs(u) + secs(s), t1 - t0,
          ", ".join("%s %d" % kv for kv in sorted(summ.items()))))
b, k = res["baseline"], res["kept"]
print("kept/baseline: CPU %.2f, wall %.2f; %.2f CPU-s per module saved; verdicts %s (%d modules)"
      % (k[0] / b[0], k[1] / b[1], (b[0] - k[0]) / count,
         "the same" if b[3] == k[3] else "DIFFER", count))
print("load: %s" % up.strip())
sys.exit(0 if b[3] == k[3] else 1)
PY
