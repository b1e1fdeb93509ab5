#!/usr/bin/env bash
# The acceptance suite (tests/xla-suite) on IREE's CPU compiler: every
# module checked with `trench check --target iree-cpu --seeds 3` in one
# trench process, then the totals as tests/adapters/xla_suite.sh prints
# them. A module passes when its check passes, is weak or unsupported (IREE
# has no lowering for it; the reason is IREE's); a module with a finding
# must be listed in tests/adapters/iree-expected with the real IREE bug it
# shows (docs/FINDINGS.md), and a listed module must still show it. Ends
# with one line "N passed, N failed" counting modules.
# Usage: tests/adapters/iree_suite.sh [--slice | --shard K/N] [BUILD_DIR]
#   --slice  every 40th module plus the first 6 listed findings (tests/iree.sh)
#   --shard K/N  the modules whose index is K mod N (0 <= K < N): the suite
#            in N parts, whose counts add up, for a busy machine
#   IREE_SUITE_ARGS: more `trench check` options
#   IREE_SUITE_TARGET: another release, e.g. iree-cpu@3.12.0 (its virtualenv
#            from scripts/venv-iree.sh --iree 3.12.0)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
slice=0 shard=""
if [ "${1:-}" = "--slice" ]; then slice=1; shift; fi
if [ "${1:-}" = "--shard" ]; then shard=$2; shift 2; fi
build=${1:-$root/build}
case $build in /*) ;; *) build=$PWD/$build;; esac
suite=$root/tests/xla-suite
expected=$here/iree-expected
target=${IREE_SUITE_TARGET:-iree-cpu}
ver=${target#iree-cpu}; ver=${ver#@}
py=$(bash "$root/scripts/venv-iree.sh" ${ver:+--iree "$ver"} | tail -n 1)
if [ ! -x "$py" ]; then
  echo "iree_suite: cannot create the virtualenv (scripts/venv-iree.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ls "$suite"/*.hlo | sort > "$tmp/all"
if [ $slice = 1 ]; then
  awk 'NR % 40 == 1' "$tmp/all" > "$tmp/list"
  # and the first few listed findings (tests/iree-findings has one module
  # per finding; the whole list would double the slice)
  grep -v '^#' "$expected" | awk 'NF { print $1 }' | head -n 6 | while read -r m; do
    echo "$suite/$m.hlo"; done >> "$tmp/list"
  sort -u "$tmp/list" -o "$tmp/list"
elif [ -n "$shard" ]; then
  awk -v k="${shard%/*}" -v n="${shard#*/}" '(NR - 1) % n == k' "$tmp/all" > "$tmp/list"
else
  cp "$tmp/all" "$tmp/list"
fi
start=$(date +%s)
# shellcheck disable=SC2086 # IREE_SUITE_ARGS is a list of options
TRENCH_HOME=$root "$build/trench" check $(cat "$tmp/list") --target "$target" --seeds 3 ${IREE_SUITE_ARGS:-} --json > "$tmp/report.json" 2> "$tmp/stderr"
rc=$?
end=$(date +%s)
if [ -n "${IREE_SUITE_KEEP:-}" ]; then cp "$tmp/report.json" "$IREE_SUITE_KEEP"; fi
python3 - "$tmp/report.json" "$expected" "$rc" "$((end - start))" <<'PY'
import fnmatch, json, os, sys
path, expected_path, rc, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    reps = json.load(open(path))
except Exception as e:
    print("iree_suite: no JSON report from trench check (exit %d): %s" % (rc, e))
    print("0 passed, 1 failed")
    sys.exit(1)
if isinstance(reps, dict):
    reps = [reps]
expected = {}
for line in open(expected_path):
    w = line.split("#", 1)[0].split()
    if w:
        expected[w[0]] = w[1]


def expected_get(name):
    if name in expected:
        return expected[name]
    return next((v for k, v in expected.items() if fnmatch.fnmatchcase(name, k)), None)


keys = ["modules", "checks", "passed", "weak", "mismatch", "unsupported", "crash", "other", "errors"]
tall = dict.fromkeys(keys, 0)
ok = bad = 0
for r in reps:
    name = os.path.basename(r["module"])[:-4]
    tall["modules"] += 1
    verdicts = set()
    for run in r.get("runs", []):
        outs = run.get("outputs")
        if not outs:
            tall["checks"] += 1
            v = run.get("verdict", "")
            tall[{"unsupported": "unsupported", "crash": "crash", "hang": "crash"}.get(v, "other")] += 1
            verdicts.add(v)
            continue
        for o in outs:
            tall["checks"] += 1
            j = o.get("judgement", "")
            tall[{"pass": "passed", "weak": "weak", "mismatch": "mismatch"}.get(j, "other")] += 1
            verdicts.add(j)
    s = r.get("summary", "error")
    if s == "error":
        tall["errors"] += 1
    want = expected_get(name)
    if want is None:
        if s in ("pass", "weak", "unsupported"):
            ok += 1
        else:
            bad += 1
            print("FAIL: %s: %s (%s)" % (name, s, ", ".join(sorted(verdicts))))
    elif s == "finding" and want in verdicts:
        ok += 1
    else:
        bad += 1
        print("FAIL: %s: expected the known finding '%s', got %s (%s)"
              % (name, want, s, ", ".join(sorted(verdicts))))
summ = {}
for r in reps:
    summ[r.get("summary", "error")] = summ.get(r.get("summary", "error"), 0) + 1
print("iree-suite: %(modules)d modules, %(checks)d checks: %(passed)d pass, %(weak)d weak, "
      "%(mismatch)d mismatch, %(unsupported)d unsupported, %(crash)d crash, %(other)d other, "
      "%(errors)d errors" % tall)
print("iree-suite: modules by summary: %s; %s s" %
      (", ".join("%s %d" % kv for kv in sorted(summ.items())), secs))
print("%d passed, %d failed" % (ok, bad))
sys.exit(1 if bad else 0)
PY
