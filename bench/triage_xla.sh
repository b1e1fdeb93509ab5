#!/bin/sh
# triage_xla.sh - isolates the XLA CPU findings of tests/findings that the
# current jax still shows, and prints one line each: culprit instruction,
# the kernel of XLA's optimized module, the passes whose disabling removes
# the bug (XLA's xla_disable_hlo_passes, each pass that changed the module
# tried alone), whether the per-instruction check agrees, target runs.
# Usage: bench/triage_xla.sh [TRENCH] [TARGET]   (TARGET: xla-cpu[@VER])
set -u
T=${1:-build/trench}
TGT=${2:-xla-cpu}
[ -x "$T" ] || { echo "no $T: run make" >&2; exit 2; }
[ -d tests/findings ] || { echo "no tests/findings" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-46s %-10s %-26s %-14s %-24s %-9s %5s\n' finding kind culprit kernel disabling-fixes per-instr runs
for f in tests/findings/*.hlo; do
  "$T" isolate "$f" --target "$TGT" --seeds 2 --json > "$tmp/r.json" 2>/dev/null
  python3 - "$tmp/r.json" "$(basename "$f" .hlo)" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print("%-46s (no finding or no report)" % sys.argv[2]); sys.exit(0)
L = r["levels"]; i, k, d = L["instruction"], L["kernel"], L["disable"]
if L["outputs"]["state"] != "found":
    print("%-46s %-10s" % (sys.argv[2], "none")); sys.exit(0)
cul = ("%" + i["culprit"] + ":" + i["op"]) if i["culprit"] else "-"
pi = "agree" if i["agree"] else ("none" if not i["per_instruction"] else "%" + i["per_instruction"])
print("%-46s %-10s %-26s %-14s %-24s %-9s %5d" % (sys.argv[2], r["signature"]["kind"], cul[:26],
      ("%" + k["kernel"]) if k["kernel"] else "-", (d["fixed_by_disabling"] or d["state"])[:24], pi,
      r["target_runs"]))
PY
done
