#!/bin/sh
# triage_xla.sh - isolates the XLA CPU findings of tests/findings that the
# current jax still shows, and prints one line each: culprit instruction,
# the guilty pass by translation validation on XLA's own pass dumps, the
# kernel of XLA's optimized module, the passes whose disabling removes
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
printf '%-44s %-9s %-24s %-22s %-18s %-22s %-6s %4s\n' finding kind culprit pass-by-dumps kernel disabling-fixes per-i runs
for f in tests/findings/*.hlo; do
  "$T" isolate "$f" --target "$TGT" --seeds 2 --timeout 20 --json > "$tmp/r.json" 2>/dev/null
  python3 - "$tmp/r.json" "$(basename "$f" .hlo)" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print("%-44s (no finding or no report)" % sys.argv[2][:44]); sys.exit(0)
L = r["levels"]; i, k, d, p = L["instruction"], L["kernel"], L["disable"], L["passes"]
if L["outputs"]["state"] != "found":
    print("%-44s %-9s" % (sys.argv[2][:44], "none")); sys.exit(0)
cul = ("%" + i["culprit"] + ":" + i["op"]) if i["culprit"] else "-"
pi = "agree" if i["agree"] else ("none" if not i["per_instruction"] else "%" + i["per_instruction"])
tv = p["pass"] if p["state"] in ("found", "none") else p["state"]
print("%-44s %-9s %-24s %-22s %-18s %-22s %-6s %4d" % (sys.argv[2][:44], r["signature"]["kind"][:9], cul[:24],
      tv[:22], (("%" + k["kernel"]) if k["kernel"] else "-")[:18], (d["fixed_by_disabling"] or d["state"])[:22],
      pi[:6], r["target_runs"]))
PY
done
