#!/bin/sh
# triage_bench.sh - isolates and reduces every registered defect of the
# built-in compiler on its trigger module (tests/defects/NAME.hlo) and
# prints one line per defect: culprit instruction, guilty pass (translation
# validation, or codegen), passes whose disabling removes it, the rule by
# fuel bisection, target runs, reduced size, time, and whether the pass
# found is the one the registry says the defect lives in (emit: codegen).
# Ends with that count and the median reduced size. Usage: bench/triage_bench.sh [TRENCH] [DEFECTS_DIR]
set -u
T=${1:-build/trench}
DIR=${2:-tests/defects}
[ -x "$T" ] || { echo "no $T: run make" >&2; exit 2; }
[ -d "$DIR" ] || { echo "no $DIR" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-40s %-12s %-14s %-14s %-26s %5s %5s %6s %s\n' defect culprit pass disabled-fixes rule runs size secs registry
"$T" defects --json | python3 -c "import json,sys; [print(e['name'], e['pass']) for e in json.load(sys.stdin)]" > "$tmp/passes"
n=0; found=0; sizes=""
for name in $("$T" defects | awk '$1 != "NAME" {print $1}'); do
  f="$DIR/$name.hlo"
  [ -f "$f" ] || { printf '%-40s (no trigger module)\n' "$name"; continue; }
  n=$((n + 1))
  s0=$(date +%s.%N)
  "$T" reduce "$f" --target "builtin:inject=$name" --seeds 2 --json > "$tmp/r.json" 2>/dev/null
  s1=$(date +%s.%N)
  want=$(awk -v n="$name" '$1 == n {print $2}' "$tmp/passes")
  python3 - "$tmp/r.json" "$name" "$s0" "$s1" "$want" <<'PY' >> "$tmp/lines" || printf '%-40s (no report)\n' "$name" >> "$tmp/lines"
import json, sys
r = json.load(open(sys.argv[1])); L = r["levels"]
i, p, d, f, red = L["instruction"], L["passes"], L["disable"], L["fuel"], L["reduce"]
cul = ("%" + i["culprit"] + ":" + i["op"]) if i["culprit"] else "-"
want = sys.argv[5]
match = p["pass"] == want or (p["pass"] == "codegen" and want == "emit")
print("%-40s %-12s %-14s %-14s %-26s %5d %5s %6.1f %s" % (sys.argv[2], cul[:12], p["pass"] or "-",
      d["fixed_by_disabling"] or "-", (f["rule"] or "-")[:26], r["target_runs"],
      red.get("instructions_after", "-"), float(sys.argv[4]) - float(sys.argv[3]),
      ("ok " if match else "NO ") + want))
PY
  tail -1 "$tmp/lines"
done
sizes=$(awk '{print $7}' "$tmp/lines" | grep -E '^[0-9]+$' | sort -n)
cnt=$(echo "$sizes" | grep -c .)
med=$(echo "$sizes" | awk -v c="$cnt" 'NR == int((c + 1) / 2) {print}')
okp=$(grep -c ' ok [a-z-]*$' "$tmp/lines")
echo "defects with a trigger module: $n; pass as in the registry: $okp; reduced: $cnt; median reduced size: $med instructions"
