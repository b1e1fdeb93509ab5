#!/usr/bin/env bash
# The acceptance suite on PyTorch: every module of tests/xla-suite/ checked
# with `trench check --target torch-eager|torch-inductor --seeds 3` in one
# trench process, then the totals (modules; checks: pass, weak, mismatch,
# unsupported, crash, other; errors). A module passes when its check
# passes, is weak or unsupported; a module with a finding must be listed
# in tests/torch/EXPECTED for that target with the torch bug it shows
# (docs/FINDINGS.md), and a listed module must still show it.
# Ends with one line "N passed, N failed" counting modules.
# Usage: tests/adapters/torch_suite.sh [--slice | --shard K/N] [--target T] [BUILD_DIR]
#   --slice     every 12th module plus the known findings
#   --shard K/N the modules whose place in the sorted list is K mod N
#               (0 <= K < N): Inductor's full run, N processes side by side
#   --target T  torch-eager (default) or torch-inductor (about 10 s a
#               module: torch.compile compiles each one)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
slice=0
shard=
target=torch-eager
while [ $# -gt 0 ]; do
  case $1 in
    --slice) slice=1; shift ;;
    --shard) shard=$2; shift 2 ;;
    --target) target=$2; shift 2 ;;
    *) break ;;
  esac
done
build=${1:-$root/build}
case $build in /*) ;; *) build=$PWD/$build;; esac
suite=$root/tests/xla-suite
py=$(bash "$root/scripts/venv-torch.sh" | tail -n 1)
if [ ! -x "$py" ]; then
  echo "torch_suite: cannot create the virtualenv (scripts/venv-torch.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ls "$suite"/*.hlo | sort > "$tmp/all"
if [ ! -s "$tmp/all" ]; then
  echo "torch_suite: no modules in $suite"
  echo "0 passed, 1 failed"
  exit 1
fi
if [ $slice = 1 ]; then
  awk 'NR % 12 == 1' "$tmp/all" > "$tmp/list"
  for m in remainder_f32; do echo "$suite/$m.hlo" >> "$tmp/list"; done
  sort -u "$tmp/list" -o "$tmp/list"
elif [ -n "$shard" ]; then
  k=${shard%/*} n=${shard#*/}
  case "$k/$n" in
    [0-9]*/[0-9]*) ;;
    *) echo "torch_suite: --shard wants K/N, not '$shard'"; echo "0 passed, 1 failed"; exit 1 ;;
  esac
  awk -v k="$k" -v n="$n" '(NR - 1) % n == k' "$tmp/all" > "$tmp/list"
else
  cp "$tmp/all" "$tmp/list"
fi
start=$(date +%s)
"$build/trench" check $(cat "$tmp/list") --target "$target" --seeds 3 --timeout 600 --start-timeout 600 --json > "$tmp/report.json" 2> "$tmp/stderr"
rc=$?
python3 - "$tmp/report.json" "$root/tests/torch/EXPECTED" "$target" "$rc" "$(( $(date +%s) - start ))" <<'PY'
import json, os, sys
path, expected_path, target, rc, secs = sys.argv[1:6]
try:
    reps = json.load(open(path))
except Exception as e:
    print("torch_suite: no JSON report from trench check (exit %s): %s" % (rc, e))
    print("0 passed, 1 failed")
    sys.exit(1)
reps = reps if isinstance(reps, list) else [reps]
expected = {}
for line in open(expected_path):
    w = line.split("#", 1)[0].split()
    if not w:
        continue
    only = [x[8:].split(",") for x in w[2:] if x.startswith("targets=")]
    if not only or target in only[0]:
        expected[w[0]] = w[1]
keys = ["modules", "checks", "pass", "weak", "mismatch", "unsupported", "crash", "other", "errors"]
tot = dict.fromkeys(keys, 0)
ok = bad = 0
for r in reps:
    name = os.path.basename(r["module"])[:-4]
    tot["modules"] += 1
    seen = set()
    for run in r.get("runs", []):
        outs = run.get("outputs")
        if not outs:
            tot["checks"] += 1
            v = run.get("verdict", "")
            tot[{"unsupported": "unsupported", "crash": "crash", "hang": "crash"}.get(v, "other")] += 1
            seen.add(v)
            continue
        for o in outs:
            tot["checks"] += 1
            j = o.get("judgement", "")
            tot[j if j in ("pass", "weak", "mismatch") else "other"] += 1
            seen.add(j)
    s = r.get("summary", "error")
    if s == "error":
        tot["errors"] += 1
    want = expected.get(name)
    if want is None and s in ("pass", "weak", "unsupported"):
        ok += 1
    elif want is not None and s == "finding" and want in seen:
        ok += 1
    else:
        bad += 1
        print("FAIL: %s: %s (%s)%s" % (name, s, ", ".join(sorted(seen)),
              "" if want is None else "; expected the known finding " + want))
print(("%s: %%(modules)d modules, %%(checks)d checks: %%(pass)d pass, %%(weak)d weak, "
       "%%(mismatch)d mismatch, %%(unsupported)d unsupported, %%(crash)d crash, "
       "%%(other)d other, %%(errors)d errors; %s s" % (target, secs)) % tot)
print("%d passed, %d failed" % (ok, bad))
sys.exit(1 if bad else 0)
PY
