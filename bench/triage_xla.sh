#!/bin/sh
# triage_xla.sh - isolates the XLA CPU findings of tests/findings that the
# current jax still shows, and prints one line each: culprit instruction,
# the guilty pass by translation validation on XLA's own pass dumps, the
# kernel of XLA's optimized module, the passes whose disabling removes
# the bug (XLA's xla_disable_hlo_passes, each pass that changed the module
# tried alone), whether the per-instruction check agrees, target runs;
# then `trench check` of the whole module and with --per-instruction
# (exit 1: fails, 0: passes) on the same seeds. A module's documented
# inputs ("// expect-input: NUMPY_EXPR" lines, as tests/findings.sh
# reads them; numpy of the project venv) replace the seeds, and its
# "// expect-args:" (less --per-instruction) go to the checks; isolation
# runs on the whole check's bundle (the inputs it failed on) when there
# is one. Ends with every finding
# whose whole-module check fails while --per-instruction passes, and
# where isolation put it (a pass by the dumps or disabling, or a fused
# kernel; "NOT isolated" otherwise).
# Usage: bench/triage_xla.sh [TRENCH] [TARGET] [ctx]   (TARGET: xla-cpu[@VER])
#   ctx: isolate only the findings whose whole-module check fails while
#   --per-instruction passes (the others get their two checks only)
set -u
T=${1:-build/trench}
TGT=${2:-xla-cpu}
ONLY=${3:-}
[ -x "$T" ] || { echo "no $T: run make" >&2; exit 2; }
[ -d tests/findings ] || { echo "no tests/findings" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-44s %-9s %-24s %-22s %-18s %-22s %-6s %4s %s\n' finding kind culprit pass-by-dumps kernel disabling-fixes per-i runs whole/per-instr
: > "$tmp/ctx"
py=.venv/bin/python
[ -x "$py" ] || py=python3
for f in tests/findings/*.hlo; do
  name=$(basename "$f" .hlo)
  ins="--seeds 2"
  i=0
  sed -n 's|^// expect-input: ||p' "$f" > "$tmp/exprs"
  while IFS= read -r expr; do
    "$py" -c "import numpy as np, sys; np.save(sys.argv[1], $expr)" "$tmp/$name.in$i.npy" || break
    [ $i = 0 ] && ins=""
    ins="$ins --input $tmp/$name.in$i.npy"
    i=$((i + 1))
  done < "$tmp/exprs"
  args=$(sed -n 's|^// expect-args: ||p' "$f" | head -n 1 | sed 's/--per-instruction//')
  case $args in *--seeds*) [ $i = 0 ] && ins="" ;; esac
  # shellcheck disable=SC2086
  rm -rf "$tmp/b"
  "$T" check "$f" --target "$TGT" $ins $args --timeout 20 --save "$tmp/b" > /dev/null 2>&1; w=$?
  # shellcheck disable=SC2086
  "$T" check "$f" --target "$TGT" $ins $args --timeout 20 --per-instruction > /dev/null 2>&1; pi=$?
  rm -f "$tmp/r.json"
  if [ "$ONLY" != ctx ] || [ "$w/$pi" = 1/0 ]; then
    # The whole check's bundle holds the inputs it failed on (options
    # such as --dist that isolate lacks made them); else the module.
    src=$f iins=$ins
    [ -f "$tmp/b/module.hlo" ] && src=$tmp/b iins=
    # shellcheck disable=SC2086
    "$T" isolate "$src" --target "$TGT" $iins --timeout 20 --json > "$tmp/r.json" 2>/dev/null
  fi
  python3 - "$tmp/r.json" "$name" "$w/$pi" "$tmp/ctx" <<'PY'
import json, sys
wp = sys.argv[3]
needs_ctx = wp == "1/0"  # whole module fails, per instruction passes
try:
    r = json.load(open(sys.argv[1]))
except Exception:
    print("%-44s %-9s %s" % (sys.argv[2][:44], "-" if wp != "1/0" else "no report", wp))
    if needs_ctx: open(sys.argv[4], "a").write("%s: NOT isolated (no report)\n" % sys.argv[2])
    sys.exit(0)
L = r["levels"]; i, k, d, p = L["instruction"], L["kernel"], L["disable"], L["passes"]
if L["outputs"]["state"] != "found":
    print("%-44s %-9s %s" % (sys.argv[2][:44], "none", wp))
    if needs_ctx: open(sys.argv[4], "a").write("%s: NOT isolated (isolate saw no finding)\n" % sys.argv[2])
    sys.exit(0)
if needs_ctx:
    where = ("pass " + p["pass"]) if p["state"] == "found" else ("kernel %" + k["kernel"]) if k["kernel"] else \
            ("disabling " + d["fixed_by_disabling"]) if d["fixed_by_disabling"] else "NOT isolated"
    open(sys.argv[4], "a").write("%s: %s\n" % (sys.argv[2], where))
cul = ("%" + i["culprit"] + ":" + i["op"]) if i["culprit"] else "-"
pi = "agree" if i["agree"] else ("none" if not i["per_instruction"] else "%" + i["per_instruction"])
tv = p["pass"] if p["state"] in ("found", "none") else p["state"]
print("%-44s %-9s %-24s %-22s %-18s %-22s %-6s %4d %s" % (sys.argv[2][:44], r["signature"]["kind"][:9], cul[:24],
      tv[:22], (("%" + k["kernel"]) if k["kernel"] else "-")[:18], (d["fixed_by_disabling"] or d["state"])[:22],
      pi[:6], r["target_runs"], wp))
PY
done
echo "whole-module check fails while --per-instruction passes: $(wc -l < "$tmp/ctx")"
sed 's/^/  /' "$tmp/ctx"
