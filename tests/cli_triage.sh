#!/usr/bin/env bash
# End-to-end tests of `trench isolate` and `trench reduce` (docs/TRIAGE.md)
# on the builtin target with planted defects: the levels name the culprit,
# pass and rule; the bundle holds every report and a regression module
# that `trench check` still finds; a clean module is not a finding.
# Usage: tests/cli_triage.sh TRENCH TESTS_DIR. Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

d="$tests/defects"
[ -f "$d/simplify-slice-of-slice-stride.hlo" ] && [ -f "$d/emit-tail-mask-short.hlo" ] && ok || bad "defect trigger modules missing"

# A rewrite defect: pass by translation validation, rule by fuel.
spec=builtin:inject=simplify-slice-of-slice-stride
expect 1 'Guilty pass\*\*: simplify' -- "$trench" isolate "$d/simplify-slice-of-slice-stride.hlo" --target "$spec" --seeds 1
expect 1 'Rule\*\*: slice-of-slice' -- "$trench" isolate "$d/simplify-slice-of-slice-stride.hlo" --target "$spec" --seeds 1
# Fuel 0 does not run the whole module (a reduce-window only simplify
# makes emittable): the rule is found on the culprit's cone.
expect 1 "Rule\\*\\*: slice-of-slice .*at \`%o\`" -- "$trench" isolate "$tests/triage/fuel_cone_slice.hlo" --target "$spec" --seeds 1
# A code generation defect: every pass keeps the result.
expect 1 'every pass keeps the result' -- "$trench" isolate "$d/emit-tail-mask-short.hlo" --target builtin:inject=emit-tail-mask-short --seeds 1
# No defect: nothing to triage.
expect 0 'no finding' -- "$trench" isolate "$d/emit-tail-mask-short.hlo" --target builtin --seeds 1

# reduce --save: every file of the bundle, and a regression module that
# still fails under the defect and passes without it.
expect 1 'Reduced\*\*: 3 -> ' -- "$trench" reduce "$d/simplify-slice-of-slice-stride.hlo" --target "$spec" --seeds 1 --save "$tmp/b"
for f in module.hlo in0.npy reduced.hlo reduced_in0.npy optimized.hlo report.json report.md report.html regress.hlo; do
  [ -s "$tmp/b/$f" ] && ok || bad "bundle lacks $f"
done
if python3 -c "
import json,sys; r=json.load(open('$tmp/b/report.json')); L=r['levels']
assert set(L)=={'outputs','instruction','passes','kernel','disable','fuel','reduce'}
assert L['instruction']['culprit']=='o' and L['passes']['pass']=='simplify' and L['fuel']['rule']=='slice-of-slice'
assert r['signature']=={'kind':'mismatch','culprit_op':'slice','pass':'simplify','value':'finite'}
assert L['reduce']['reproduced']==L['reduce']['reproduction_runs']>0"; then ok; else bad "report.json levels"; fi
grep -q '<mark>' "$tmp/b/report.html" && ok || bad "report.html marks no culprit"
expect 1 'mismatch' -- "$trench" check "$tmp/b/regress.hlo" --target "$spec" --input "$tmp/b/reduced_in0.npy"
expect 0 '^check: pass' -- "$trench" check "$tmp/b/regress.hlo" --target builtin --input "$tmp/b/reduced_in0.npy"

# A bundle of trench check is triaged in place (BUNDLE/triage).
"$trench" check "$d/emit-tail-mask-short.hlo" --target builtin:inject=emit-tail-mask-short --seeds 1 --save "$tmp/c" > /dev/null 2>&1
expect 1 'Culprit instruction\*\*: `%r` \(add\)' -- "$trench" isolate "$tmp/c" --target builtin:inject=emit-tail-mask-short
[ -s "$tmp/c/triage/report.json" ] && ok || bad "no triage bundle inside the check bundle"

# A campaign with --triage: its finding's bundle is isolated and reduced
# in the background (BUNDLE/triage), and the summary counts it.
expect 1 'triaged +1 +\(0 failed' -- "$trench" fuzz --target builtin:inject=emit-tail-mask-short \
  --corpus "$d/emit-tail-mask-short.hlo" --no-gen --count 3 --until-finding --triage --out "$tmp/f" -q
fb=$(ls -d "$tmp"/f/findings/*/ 2>/dev/null | head -1)
for f in report.md report.json reduced.hlo; do
  [ -n "$fb" ] && [ -s "$fb/triage/$f" ] && ok || bad "the campaign's finding has no triage/$f"
done
[ -n "$fb" ] && [ ! -e "$fb/triage.err" ] && ok || bad "the campaign's triage failed: $(cat "$fb/triage.err" 2>/dev/null)"
# ... and says which findings are recorded bugs: builtin's planted
# defects are in no known.def entry, so the finding is new.
grep -Eq '"known":[[:space:]]*"new"' "$tmp/f/summary.json" && ok || bad "summary.json does not say the finding is new"

expect 2 'MODULE or BUNDLE' -- "$trench" isolate
expect 2 'unknown option' -- "$trench" reduce "$d/emit-tail-mask-short.hlo" --bogus
expect 0 'Usage: trench reduce' -- "$trench" reduce --help
finish
