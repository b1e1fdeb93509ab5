#!/usr/bin/env bash
# The XLA CPU acceptance suite (issue 4): every module of tests/xla-suite/
# checked against real XLA CPU with `trench check --target xla-cpu --seeds 3`
# in one trench process (one adapter start), then the totals:
#   modules, checks (seed x output), pass, weak, mismatch, unsupported,
#   crash (crash or hang of the adapter), other (compile-error, error,
#   protocol-error), errors (the reference could not evaluate the module).
# A module passes when its check passes, is weak or unsupported; a module
# with a finding must be listed in tests/xla-suite/EXPECTED with the real
# XLA bug it shows (docs/FINDINGS.md), and a listed module must still show
# it (so a fixed bug or a changed verdict is noticed). Ends with one line
# "N passed, N failed" counting modules.
# Usage: tests/adapters/xla_suite.sh [--slice] [BUILD_DIR]
#   XLA_SUITE_ARGS: more `trench check` options, e.g. "--specials 0.1" or
#            "--dist boundary --seeds 1" (docs/FINDINGS.md lists what such
#            passes show beyond the known findings)
#   --slice  every 12th module plus two known findings: the
#            representative part `make test` runs (about 15 s)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
slice=0
if [ "${1:-}" = "--slice" ]; then slice=1; shift; fi
build=${1:-$root/build}
case $build in /*) ;; *) build=$PWD/$build;; esac
suite=$root/tests/xla-suite
py=$(bash "$root/scripts/venv.sh" | tail -n 1)
if [ ! -x "$py" ]; then
  echo "xla_suite: cannot create the virtualenv (scripts/venv.sh)"
  echo "0 passed, 1 failed"
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ls "$suite"/*.hlo | sort > "$tmp/all"
if [ $slice = 1 ]; then
  awk 'NR % 12 == 1' "$tmp/all" > "$tmp/list"
  # Two known findings (a crash and a mismatch) stay in the slice.
  for m in divide_edges_s32 popcnt_s4; do echo "$suite/$m.hlo" >> "$tmp/list"; done
  sort -u "$tmp/list" -o "$tmp/list"
else
  cp "$tmp/all" "$tmp/list"
fi
start=$(date +%s)
# shellcheck disable=SC2086 # XLA_SUITE_ARGS is a list of options
"$build/trench" check $(cat "$tmp/list") --target xla-cpu --seeds 3 ${XLA_SUITE_ARGS:-} --json > "$tmp/report.json" 2> "$tmp/stderr"
rc=$?
end=$(date +%s)
python3 - "$tmp/report.json" "$suite/EXPECTED" "$rc" "$((end - start))" <<'PY'
import json, os, sys
path, expected_path, rc, secs = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
try:
    reps = json.load(open(path))
except Exception as e:
    print("xla_suite: no JSON report from trench check (exit %d): %s" % (rc, e))
    print("0 passed, 1 failed")
    sys.exit(1)
if isinstance(reps, dict):
    reps = [reps]
expected = {}
pinned = ""
for req in open(os.path.join(os.path.dirname(expected_path), "..", "..", "adapters", "xla", "requirements.txt")):
    if req.startswith("jax=="):
        pinned = req.strip()[5:]
for line in open(expected_path):
    line = line.split("#", 1)[0].split()
    # "only=V1,V2": a finding of those releases (tests/adapters/xla_versions.sh)
    only = [w[5:].split(",") for w in line[2:] if w.startswith("only=")]
    if line and (not only or pinned in only[0]):
        expected[line[0]] = line[1]
keys = ["modules", "checks", "passed", "weak", "mismatch", "unsupported", "crash", "other", "errors"]
tall = dict.fromkeys(keys, 0)
tnew = dict.fromkeys(keys, 0)  # modules not in EXPECTED
ok = bad = 0
for r in reps:
    name = os.path.basename(r["module"])[:-4]
    known = name in expected

    def count(key):
        tall[key] += 1
        if not known:
            tnew[key] += 1
    count("modules")
    verdicts = set()
    for run in r.get("runs", []):
        outs = run.get("outputs")
        if not outs:
            count("checks")
            v = run.get("verdict", "")
            count({"unsupported": "unsupported", "crash": "crash", "hang": "crash"}.get(v, "other"))
            verdicts.add(v)
            continue
        for o in outs:
            count("checks")
            j = o.get("judgement", "")
            count({"pass": "passed", "weak": "weak", "mismatch": "mismatch"}.get(j, "other"))
            verdicts.add(j)
    s = r.get("summary", "error")
    if s == "error":
        count("errors")
    want = expected.get(name)
    if want is None:
        if s in ("pass", "weak", "unsupported"):
            ok += 1
        else:
            bad += 1
            print("FAIL: %s: %s (%s)" % (name, s, ", ".join(sorted(verdicts))))
    else:
        if s == "finding" and want in verdicts:
            ok += 1
        else:
            bad += 1
            print("FAIL: %s: expected the known finding '%s', got %s (%s)" % (name, want, s, ", ".join(sorted(verdicts))))
fmt = ("%(modules)d modules, %(checks)d checks: %(passed)d pass, %(weak)d weak, "
       "%(mismatch)d mismatch, %(unsupported)d unsupported, %(crash)d crash, %(other)d other, "
       "%(errors)d errors")
print("xla-suite: " + fmt % tall)
print("xla-suite: without the known findings: " + fmt % tnew)
print("xla-suite: %d of them known findings (tests/xla-suite/EXPECTED); %s s" %
      (sum(1 for r in reps if os.path.basename(r["module"])[:-4] in expected), secs))
print("%d passed, %d failed" % (ok, bad))
sys.exit(1 if bad else 0)
PY
