#!/usr/bin/env bash
# End-to-end tests of the defect registry: `trench defects` lists every
# entry of src/comp/defects.def, and `trench check` on the builtin target
# with inject=NAME finds the planted mistake on a module that triggers it
# (and passes without it). Usage: tests/cli_defects.sh TRENCH TESTS_DIR
# Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

# Every registry entry is listed, with its category and pass.
names=$(sed -n 's/^X([A-Z0-9_]*, *"\([^"]*\)".*/\1/p' "$root/src/comp/defects.def")
[ -n "$names" ] && ok || bad "no names read from defects.def"
list=$("$trench" defects 2>&1)
[ $? = 0 ] && ok || bad "trench defects failed"
for n in $names; do
  if printf '%s\n' "$list" | grep -Eq "^$n +(emitter|simplifier|fusion|constfold|loop|layout) +[a-z-]+ +[^ ]"; then ok
  else bad "trench defects does not list $n with category and pass"; fi
done
count=$(printf '%s\n' "$names" | wc -l)
json=$("$trench" defects --json)
if printf '%s' "$json" | python3 -c "import json,sys; a=json.load(sys.stdin); assert len(a)==$count and all(set(e)=={'name','category','pass','description'} for e in a)"; then ok
else bad "trench defects --json"; fi
expect 0 'inject=NAME' -- "$trench" defects --help
expect 2 'unknown option' -- "$trench" defects --bogus

# A 13-element add: with 8 lanes the masked tail drops element 12.
cat > "$tmp/tail.hlo" <<'HLO'
HloModule tail
ENTRY e {
  p = f32[13] parameter(0)
  q = f32[13] parameter(1)
  ROOT r = f32[13] add(p, q)
}
HLO
expect 1 'mismatch .*first at \[12\]' -- "$trench" check "$tmp/tail.hlo" --target builtin:inject=emit-tail-mask-short --seeds 1
expect 0 '^check: pass' -- "$trench" check "$tmp/tail.hlo" --target builtin --seeds 1
# 16 elements: no tail, so the defect has nothing to break.
sed 's/13/16/g' "$tmp/tail.hlo" > "$tmp/notail.hlo"
expect 0 '^check: pass' -- "$trench" check "$tmp/notail.hlo" --target builtin:inject=emit-tail-mask-short --seeds 1
expect 2 "unknown defect 'no-such-defect'" -- "$trench" check "$tmp/tail.hlo" --target builtin:inject=no-such-defect

# Every trigger module in tests/defects: broken with the defect, right
# without it; its .safe.hlo twin stays right even with the defect.
for f in "$tests"/defects/*.hlo; do
  [ -e "$f" ] || continue
  case $f in *.safe.hlo) continue ;; esac
  n=$(basename "$f" .hlo)
  if ! printf '%s\n' "$names" | grep -qx "$n"; then bad "tests/defects/$n.hlo names no defect"; continue; fi
  expect 1 'mismatch' -- "$trench" check "$f" --target "builtin:inject=$n" --seeds 2
  expect 0 '^check: pass' -- "$trench" check "$f" --target builtin --seeds 2
  if [ -e "$tests/defects/$n.safe.hlo" ]; then
    expect 0 '^check: pass' -- "$trench" check "$tests/defects/$n.safe.hlo" --target "builtin:inject=$n" --seeds 2
  fi
done

finish
