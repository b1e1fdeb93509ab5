#!/usr/bin/env bash
# End-to-end tests of `trench check`: the reference against targets that
# are right, silently wrong, or crashing. Usage: tests/cli_check.sh TRENCH TESTS_DIR
# Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
cat > "$tmp/add.hlo" <<'HLO'
HloModule addm
ENTRY e {
  p = f32[16] parameter(0)
  q = f32[16] parameter(1)
  ROOT r = f32[16] add(p, q)
}
HLO
echo_t="cmd:python3 $root/adapters/example/echo_adapter.py"
bad_t="cmd:python3 $root/tests/adapters/bad_adapter.py"

# Right answers pass: the reference itself, the built-in compiler, an adapter.
expect 0 '^check: pass' -- "$trench" check "$root/examples/mlp.hlo" --target interp --seeds 2
expect 0 '^seed 1 out0: pass \(checked 80, uncertain 0' -- "$trench" check "$root/examples/mlp.hlo" --target builtin --seeds 2
expect 0 '^check: pass' -- "$trench" check "$root/examples/convnet.hlo" --target builtin --seeds 1
expect 0 '^check: pass' -- "$trench" check "$tmp/add.hlo" --target "$echo_t" --seeds 3

# A silent wrong result, a few ulps past the bound, in one element.
expect 1 'seed 1 out0: mismatch \(checked 16, uncertain 0; failing 1, first at \[3\]' -- \
  "$trench" check "$tmp/add.hlo" --target "$bad_t corrupt 3 1e-6" --seeds 2
expect 1 '^check: finding' -- "$trench" check "$tmp/add.hlo" --target "$bad_t corrupt 3 1e-6" --seeds 1

# A crash on an opcode is a verdict on every seed: the campaign survives.
out=$("$trench" check "$tmp/add.hlo" --target "$bad_t crash add" --seeds 3 2>&1)
rc=$?
n=$(printf '%s\n' "$out" | grep -c ': crash: the target exited with status 3')
if [ "$rc" = 1 ] && [ "$n" = 3 ]; then ok; else bad "crash adapter: rc=$rc, $n crash lines"; printf '%s\n' "$out"; fi
# A target that does not support the module is not a finding.
expect 0 '^check: unsupported' -- "$trench" check "$root/examples/mlp.hlo" --target "$echo_t" --seeds 1

# The bundle of the first finding reproduces it with the command in its README.
expect 1 'finding' -- "$trench" check "$tmp/add.hlo" --target "$bad_t corrupt 5 1e-5" --seeds 2 --save "$tmp/b"
for f in module.hlo in0.npy in1.npy ref0.npy target0.npy report.json README.md; do
  if [ -s "$tmp/b/$f" ]; then ok; else bad "bundle lacks $f"; fi
done
cmd=$(grep -E '^    trench check ' "$tmp/b/README.md" | sed 's/^    trench //')
if [ -n "$cmd" ]; then
  out=$(eval "\"$trench\" $cmd" 2>&1)
  if [ $? = 1 ] && printf '%s\n' "$out" | grep -q 'inputs out0: mismatch (checked 16, uncertain 0; failing 1, first at \[5\]'; then ok
  else bad "bundle command does not reproduce: $cmd"; printf '%s\n' "$out"; fi
else
  bad "README has no command"
fi
if python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); o=r["outputs"][0]; assert r["verdict"]=="ok" and o["judgement"]=="mismatch" and o["failing"]==1 and o["first_index"]=="[5]"' "$tmp/b/report.json"; then ok; else bad "report.json content"; fi
# refN.npy is the reference in exact mode, what `trench run` gives:
# (1e8 + 1) - 1e8 rounds to 0 in f32, where the shadow value (shadowN.npy)
# is 1.
printf 'HloModule cancel\nENTRY e {\n  c = f32[] constant(1e8)\n  o = f32[] constant(1)\n  s = f32[] add(c, o)\n  ROOT r = f32[] subtract(s, c)\n}\n' > "$tmp/cancel.hlo"
expect 0 'out0: weak .*worst ratio 0.25' -- "$trench" check "$tmp/cancel.hlo" --target interp --seeds 1 --save "$tmp/bc"
"$trench" run "$tmp/cancel.hlo" --out "$tmp/rc" > /dev/null 2>&1
if cmp -s "$tmp/bc/ref0.npy" "$tmp/rc/out0.npy" && [ "$(tail -c 4 "$tmp/bc/ref0.npy" | od -An -tx1 | tr -d ' ')" = 00000000 ]
then ok; else bad "ref0.npy is not the exact-mode result 0"; od -An -tx1 "$tmp/bc/ref0.npy" | tail -2; fi
if [ "$(tail -c 4 "$tmp/bc/shadow0.npy" | od -An -tx1 | tr -d ' ')" = 0000803f ]; then ok; else bad "shadow0.npy is not the shadow value 1"; fi
if grep -q 'reference in exact mode' "$tmp/bc/README.md"; then ok; else bad "bundle README: refN.npy"; fi

# JSON report.
out=$("$trench" check "$tmp/add.hlo" --target interp --seeds 2 --json 2>&1)
if printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["summary"]=="pass" and len(r["runs"])==2 and r["runs"][1]["seed"]==1 and r["runs"][0]["outputs"][0]["checked"]==16'; then ok; else bad "--json"; printf '%s\n' "$out"; fi

# Several modules in one run: one target process, a verdict line per
# module, a total, the worst exit code; --json is an array of reports.
cp "$tmp/add.hlo" "$tmp/add2.hlo"
out=$("$trench" check "$tmp/add.hlo" "$root/examples/mlp.hlo" --target interp --seeds 2 2>&1)
rc=$?
if [ $rc = 0 ] && printf '%s\n' "$out" | grep -q "^check: pass ($tmp/add.hlo on interp)" \
   && printf '%s\n' "$out" | grep -q "^check: pass ($root/examples/mlp.hlo on interp)" \
   && printf '%s\n' "$out" | grep -q '^check: 2 modules, 4 checks: 4 pass, 0 weak, 0 mismatch, 0 unsupported, 0 crash, 0 other, 0 errors (on interp)$'
then ok; else bad "two modules on interp (exit $rc)"; printf '%s\n' "$out"; fi
expect 0 '^check: 2 modules, 2 checks: 2 pass' -- "$trench" check "$tmp/add.hlo" "$root/examples/convnet.hlo" --target builtin --seeds 1
# A collective whose replica_groups name replicas beyond 0 needs that many
# participants (XLA's simplifier makes this all-reduce 4x its operand):
# declined, not judged as the one-participant identity.
for g in '{{0, 1, 2, 3}}' '[1,4]<=[4]' '{{0}}' '{}'; do
  cat > "$tmp/ar.hlo" <<EOF
HloModule ar
add { a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b) }
ENTRY e {
  p = f32[4,4] parameter(0)
  ROOT ar = f32[4,4] all-reduce(p), to_apply=add, replica_groups=$g
}
EOF
  case $g in
    *1*) expect 2 'replica_groups name replica 1 \(one participant is modelled\)' -- "$trench" check "$tmp/ar.hlo" --target interp --seeds 1 ;;
    *) expect 0 '^check: pass' -- "$trench" check "$tmp/ar.hlo" --target interp --seeds 1 ;;
  esac
done
# An integer scatter whose combiner is add or multiply (XLA's scatter_test
# modules): any order of duplicate updates gives the same bits, so every
# element is judged; an overwrite combiner (root: the update parameter)
# leaves the last writer to the implementation, so only targets hit twice
# or more are uncertain; a combiner trench does not recognise (a copy of
# the update) stays conservative. index-dup draws duplicates.
for comb in 'ROOT r = s32[] add(a, b)' 'ROOT r = s32[] multiply(a, b)' 'ROOT r = s32[] copy(b)' 'keep'; do
  cat > "$tmp/iscatter.hlo" <<EOF
HloModule iscatter
comb { a = s32[] parameter(0)
  $( [ "$comb" = keep ] && echo 'ROOT b = s32[] parameter(1)' || printf 'b = s32[] parameter(1)\n  %s' "$comb" ) }
ENTRY main {
  operand = s32[3,3] parameter(0)
  indices = s32[4] parameter(1)
  updates = s32[4,3] parameter(2)
  ROOT scatter = s32[3,3] scatter(operand, indices, updates), to_apply=comb,
      update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1
}
EOF
  case $comb in
    keep) expect 0 '^seed 0 out0: (pass|weak) \(checked [1-8], uncertain [1-8]' -- "$trench" check "$tmp/iscatter.hlo" --target interp --seeds 1 --dist index-dup ;;
    *copy*) expect 0 '^seed 0 out0: weak \(checked [0-8], uncertain [1-9]' -- "$trench" check "$tmp/iscatter.hlo" --target interp --seeds 1 --dist index-dup ;;
    *) expect 0 '^seed 0 out0: pass \(checked 9, uncertain 0' -- "$trench" check "$tmp/iscatter.hlo" --target interp --seeds 1 --dist index-dup ;;
  esac
done
# A finding in one module: the others still run, the exit is 1; the
# crashing adapter is restarted for the next module.
sed 's/add(p, q)/multiply(p, q)/' "$tmp/add.hlo" > "$tmp/mul.hlo"
out=$("$trench" check "$tmp/add.hlo" "$tmp/mul.hlo" "$tmp/add2.hlo" --target "$bad_t crash add" --seeds 1 2>&1)
rc=$?
if [ $rc = 1 ] && [ "$(printf '%s\n' "$out" | grep -c ': crash: the target exited with status 3')" = 2 ] \
   && printf '%s\n' "$out" | grep -q "^check: finding ($tmp/add2.hlo on" \
   && printf '%s\n' "$out" | grep -q '^check: 3 modules, 3 checks: 1 pass, 0 weak, 0 mismatch, 0 unsupported, 2 crash, 0 other, 0 errors'
then ok; else bad "three modules, a crashing target (exit $rc)"; printf '%s\n' "$out"; fi
out=$("$trench" check "$tmp/add.hlo" "$tmp/add2.hlo" --target "$bad_t corrupt 3 1e-6" --seeds 2 --json 2>&1)
rc=$?
if [ $rc = 1 ] && printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); assert isinstance(r, list) and len(r)==2 and all(x["summary"]=="finding" and len(x["runs"])==2 for x in r) and r[1]["module"].endswith("add2.hlo")'
then ok; else bad "--json with two modules (exit $rc)"; printf '%s\n' "$out" | tail -5; fi
# A module that does not parse is invalid (exit 1), for it alone.
printf 'HloModule broken\nENTRY e {\n  ROOT r = f32[2] add(\n}\n' > "$tmp/broken.hlo"
out=$("$trench" check "$tmp/broken.hlo" "$tmp/add.hlo" --target interp --seeds 1 2>&1)
rc=$?
if [ $rc = 1 ] && printf '%s\n' "$out" | grep -q "^check: invalid ($tmp/broken.hlo on interp)" \
   && printf '%s\n' "$out" | grep -q "^check: pass ($tmp/add.hlo on interp)"
then ok; else bad "a broken module among others (exit $rc)"; printf '%s\n' "$out"; fi
# --save DIR writes DIR/NAME per module.
expect 1 'finding' -- "$trench" check "$tmp/add.hlo" "$tmp/add2.hlo" --target "$bad_t corrupt 5 1e-5" --seeds 1 --save "$tmp/many"
if [ -s "$tmp/many/add/report.json" ] && [ -s "$tmp/many/add2/README.md" ]; then ok; else bad "--save with two modules"; ls -R "$tmp/many"; fi
# A loop that never ends costs one verdict within the deadline: the
# reference declines it (--timeout bounds the reference too).
cp "$tests/limits/endless.hlo" "$tmp/loop.hlo"
expect 2 'reference deadline of 2 s passed' -- timeout 20 "$trench" check "$tmp/loop.hlo" --target builtin --seeds 1 --timeout 2
expect 2 '^check: declined' -- timeout 20 "$trench" check "$tmp/loop.hlo" --target builtin --seeds 1 --max-trips 1000
# Bundles are never mixed: an existing --save DIR is refused before the
# target runs; the same basename twice gets NAME-2; every bundle is
# complete (COMPLETE marker) and no work folder is left behind.
expect 2 'exists: a bundle is never written over another' -- "$trench" check "$tmp/add.hlo" --target "$bad_t corrupt 5 1e-5" --seeds 1 --save "$tmp/b"
mkdir -p "$tmp/other"; cp "$tmp/add.hlo" "$tmp/other/add.hlo"
expect 1 'finding' -- "$trench" check "$tmp/add.hlo" "$tmp/other/add.hlo" --target "$bad_t corrupt 5 1e-5" --seeds 1 --save "$tmp/twice"
if [ -f "$tmp/twice/add/COMPLETE" ] && [ -f "$tmp/twice/add-2/COMPLETE" ] && [ -z "$(ls -A "$tmp/twice" | grep partial)" ]
then ok; else bad "two modules with one basename"; ls -laR "$tmp/twice"; fi
# --log: one synced JSON line per module, the summary in each.
expect 1 'finding' -- "$trench" check "$tmp/add.hlo" "$tmp/add2.hlo" --target "$bad_t corrupt 5 1e-5" --seeds 1 --log "$tmp/log.jsonl"
if [ "$(wc -l < "$tmp/log.jsonl")" = 2 ] && python3 -c "
import json,sys
rows=[json.loads(l) for l in open(sys.argv[1])]
assert [r['summary'] for r in rows]==['finding','finding'], rows
assert rows[0]['signature']['kind']=='mismatch' and rows[0]['signature']['op']=='add', rows[0]
" "$tmp/log.jsonl"; then ok; else bad "--log JSONL"; cat "$tmp/log.jsonl"; fi
# kill -9 at random points of --save: every bundle left is complete, or
# there is none under the real name (tests/crash_bundles.sh runs 1,000).
bash "$tests/crash_bundles.sh" "$trench" 20 "$tmp/kill" && ok || bad "kill -9 during --save"
expect 2 '--input needs a single MODULE' -- "$trench" check "$tmp/add.hlo" "$tmp/add2.hlo" --target interp --input "$tmp/b/in0.npy"

# Usage and input errors.
expect 2 'no --target given' -- "$trench" check "$tmp/add.hlo"
expect 2 'unknown option' -- "$trench" check "$tmp/add.hlo" --target interp --frobnicate
expect 2 '' -- "$trench" check "$tmp/add.hlo" --target nosuchtarget
printf 'HloModule el\nENTRY e {\n  p = f32[16] parameter(0)\n  c = f32[16] constant({...})\n  ROOT r = f32[16] add(p, c)\n}\n' > "$tmp/elided.hlo"
expect 2 'the reference cannot evaluate' -- "$trench" check "$tmp/elided.hlo" --target interp
# --fill-elided: both sides get the same filled values; a bundle writes them.
expect 0 '^check: pass' -- "$trench" check "$tmp/elided.hlo" --target builtin --seeds 1 --fill-elided --save "$tmp/el"
if [ -s "$tmp/el/module.hlo" ] && ! grep -q '{\.\.\.}' "$tmp/el/module.hlo"; then ok; else bad "--fill-elided bundle keeps {...}"; fi
expect 2 'takes 2 inputs, 1 --input given' -- "$trench" check "$tmp/add.hlo" --target interp --input "$tmp/b/in0.npy"

# --per-instruction: each entry instruction judged alone on the target's
# operand values; the planted fusion defect is named at its instruction.
expect 0 'seed 0 per-instruction: pass \(checked [0-9]+: pass [0-9]+, weak 0, mismatch 0; skipped 0' -- "$trench" check "$root/examples/mlp.hlo" --target builtin --seeds 1 --per-instruction
expect 0 'seed 0 per-instruction: pass' -- "$trench" check "$root/examples/convnet.hlo" --target interp --seeds 1 --per-instruction=chains
cat > "$tmp/bc1.hlo" <<'HLO'
HloModule bc1
ENTRY e {
  x = f32[1,3] parameter(0)
  y = f32[1,4,3] parameter(1)
  m = f32[1,4,3] multiply(y, y)
  b = f32[1,4,3] broadcast(x), dimensions={0,2}
  s = f32[1,4,3] add(b, m)
  ROOT r = f32[1,4,3] tanh(s)
}
HLO
expect 1 'seed 0 first mismatch: %s \(add\) out0 at \[0,[0-9],[0-9]\]: target' -- "$trench" check "$tmp/bc1.hlo" --target builtin:inject=fusion-broadcast-size1-map --seeds 1 --per-instruction
expect 1 'first mismatch: %r \(tanh, judged with %m, %b, %s\)' -- "$trench" check "$tmp/bc1.hlo" --target builtin:inject=fusion-broadcast-size1-map --seeds 1 --per-instruction=chains
out=$("$trench" check "$tmp/bc1.hlo" --target builtin:inject=fusion-broadcast-size1-map --seeds 2 --per-instruction --json 2>&1)
rc=$?
if [ $rc = 1 ] && printf '%s' "$out" | python3 -c 'import json,sys; r=json.load(sys.stdin); p=[x["per_instruction"] for x in r["runs"]]; assert len(p)==2 and all(q["verdict"]=="mismatch" and q["checked"]==4 and q["first_mismatch"]["instruction"]=="s" and q["first_mismatch"]["opcode"]=="add" and "allowed" in q["first_mismatch"] for q in p)'
then ok; else bad "--per-instruction --json (exit $rc)"; printf '%s\n' "$out" | tail -5; fi
expect 0 'seed 0 per-instruction: pass \(checked 4: pass 4' -- "$trench" check "$tmp/bc1.hlo" --target builtin --seeds 1 --per-instruction
expect 2 '--per-instruction takes all or chains' -- "$trench" check "$tmp/bc1.hlo" --target interp --per-instruction=some
expect 1 'first mismatch: %s' -- "$trench" check "$tmp/bc1.hlo" --target builtin:inject=fusion-broadcast-size1-map --seeds 1 --per-instruction --save "$tmp/pi"
if [ -s "$tmp/pi/report.json" ] && grep -q 'ROOT %s = f32\[1,4,3\] add(%b, %m)' "$tmp/pi/instruction/module.hlo" \
   && [ -s "$tmp/pi/instruction/in1.npy" ] && [ -s "$tmp/pi/instruction/target0.npy" ] \
   && "$trench" check "$tmp/pi/instruction/module.hlo" --target interp --input "$tmp/pi/instruction/in0.npy" --input "$tmp/pi/instruction/in1.npy" >/dev/null
then ok; else bad "--per-instruction --save: the instruction alone"; ls -R "$tmp/pi"; fi
expect 1 '^check: per-instruction: 10 instructions judged: 8 pass, 0 weak, 2 mismatch; 0 skipped; 0 runs without outputs' -- "$trench" check "$tmp/bc1.hlo" "$tmp/add.hlo" --target builtin:inject=fusion-broadcast-size1-map --seeds 2 --per-instruction
# fast-minmax excuses a NaN turned into a number only through a min or max
# on the element's path: with no min/max it is a mismatch under the xla-cpu
# profile; a maximum that drops NaN (fast min/max) is excused; a module
# with a maximum whose target writes some other number is still a mismatch.
cat > "$tmp/max.hlo" <<'HLO'
HloModule maxm
ENTRY e {
  p = f32[16] parameter(0)
  q = f32[16] parameter(1)
  m = f32[16] maximum(p, q)
  ROOT r = f32[16] add(m, q)
}
HLO
xp=$root/profiles/xla-cpu.conf
expect 1 'seed 0 out0: mismatch .*reference nan, target 3' -- "$trench" check "$tmp/add.hlo" --target "$bad_t nan-to 3" --specials 0.3 --seeds 1 --profile "$xp"
expect 0 'seed 0 out0: pass .*excused [0-9]* by fast-minmax' -- "$trench" check "$tmp/max.hlo" --target "$bad_t fast-max" --specials 0.3 --seeds 1 --profile "$xp"
expect 1 'seed 0 out0: mismatch .*reference nan, target 3' -- "$trench" check "$tmp/max.hlo" --target "$bad_t nan-to 3" --specials 0.3 --seeds 1 --profile "$xp"
finish
