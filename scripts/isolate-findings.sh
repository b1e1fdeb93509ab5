#!/usr/bin/env bash
# isolate-findings.sh - isolates every finding of a fuzz campaign and says
# which are recorded bugs: for each OUT/findings/SIG bundle, `trench
# isolate --no-passes` (its report in SIG/isolate/), then one line per
# signature: the culprit, the recorded bug whose trigger it matches
# (src/triage/known.def, docs/FINDINGS.md) or "new", and the wrong element.
# The table also goes to OUT/isolate.tsv; bundles isolated before are not
# run again. docs/FUZZ.md, "After a campaign".
# Usage: scripts/isolate-findings.sh OUT [TARGET] [JOBS]
#   TARGET: the campaign's (from a bundle's fuzz.json); JOBS: 1
set -u
out=${1:?usage: scripts/isolate-findings.sh OUT [TARGET] [JOBS]}
target=${2:-}
jobs=${3:-1}
here=$(cd "$(dirname "$0")/.." && pwd)
trench=${TRENCH:-$here/build/trench}
[ -d "$out/findings" ] || { echo "isolate-findings: $out/findings: no such folder" >&2; exit 2; }
[ -x "$trench" ] || { echo "isolate-findings: $trench: not built (make)" >&2; exit 2; }
field() { # field FILE KEY: a string field of a JSON file
  python3 -c 'import json,sys
try: print(json.load(open(sys.argv[1])).get(sys.argv[2], ""))
except Exception: print("")' "$1" "$2"
}
one() { # one BUNDLE: isolate it unless done
  b=$1
  [ -s "$b/isolate/report.json" ] || [ "$(cat "$b/isolate.rc" 2>/dev/null)" = 0 ] && return 0
  t=$target
  [ -n "$t" ] || t=$(field "$b/fuzz.json" target)
  "$trench" isolate "$b" --target "${t:-builtin}" --no-passes --save "$b/isolate" >/dev/null 2>"$b/isolate.err"
  echo $? >"$b/isolate.rc"
}
export -f one field
export target trench
ls -d "$out"/findings/*/ 2>/dev/null | sed 's|/$||' | xargs -r -P "$jobs" -I{} bash -c 'one "$1"' _ {}
python3 - "$out" <<'PY'
import json, os, sys
out = sys.argv[1]
rows = []
for sig in sorted(os.listdir(os.path.join(out, "findings"))):
    p = os.path.join(out, "findings", sig, "isolate", "report.json")
    try:
        r = json.load(open(p))
    except Exception:
        try: rc = open(os.path.join(out, "findings", sig, "isolate.rc")).read().strip()
        except OSError: rc = ""
        if rc == "0": rows.append((sig, "-", "no finding", "the bundle passes or is weak now"))
        else: rows.append((sig, "-", "not isolated", "see %s/isolate.err" % sig))
        continue
    i = r.get("levels", {}).get("instruction", {})
    culprit = i.get("culprit", "") or "-"
    if i.get("inner"): culprit += " > " + i["inner"]
    known = i.get("known", "") or ("new" if i.get("state") == "found" else i.get("state", "?"))
    if r.get("levels", {}).get("outputs", {}).get("state") == "none": known = "no finding"
    rows.append((sig, culprit, known, i.get("wrong_element", {}).get("text", "") or i.get("note", "")))
with open(os.path.join(out, "isolate.tsv"), "w") as f:
    for row in rows: f.write("\t".join(row) + "\n")
w = max([len(r[0]) for r in rows] + [9])
for r in rows: print("%-*s  %-8s  %s  %s" % (w, r[0], r[2], r[1], r[3]))
def group(k):
    if k in ("new", "no finding"): return k
    return "known" if "-" in k else "other"
counts = {}
for r in rows: counts[group(r[2])] = counts.get(group(r[2]), 0) + 1
print("\n%d signatures: %d match recorded bugs, %d new, %d no longer fail, %d not isolated"
      % (len(rows), counts.get("known", 0), counts.get("new", 0), counts.get("no finding", 0), counts.get("other", 0)))
PY
