#!/usr/bin/env bash
# The recorded XLA findings (tests/findings/, docs/FINDINGS.md) still
# reproduce on the pinned XLA: each module says what `trench check` must
# report ("// expect: KIND", KIND a finding's signature kind, or declined
# where the reference cannot judge it), with which options ("//
# expect-args:") and inputs ("// expect-input: NUMPY_EXPR", one per
# parameter leaf, written with the project venv's numpy). A release that
# fixes a bug fails its test: update the expectation and FINDINGS.md.
# "// expect-flaky: WHY" gives the check and isolation five tries (a bug
# that shows on some compiles only). "// expect-known: ID" names the entry
# of src/triage/known.def whose trigger `trench isolate` must recognise in
# the module (every module has one, and every entry of the target's
# family has a module).
# Usage: tests/findings.sh TRENCH TESTS_DIR [TARGET]   (TARGET: xla-cpu)
set -u
trench=$1
tests=$(cd "$2" && pwd)
target=${3:-xla-cpu}
root=$(cd "$tests/.." && pwd)
. "$tests/lib.sh"
py=$(bash "$root/scripts/venv.sh" | tail -n 1)
[ -x "$py" ] || { bad "cannot create the virtualenv"; finish; }
shopt -s nullglob
files=("$tests"/findings/*.hlo)
seen=" "
[ ${#files[@]} -ge 1 ] || { bad "no modules in $tests/findings"; finish; }
for f in "${files[@]}"; do
  name=$(basename "$f" .hlo)
  want=$(sed -n 's|^// expect: \([a-z_-]*\).*|\1|p' "$f" | head -n 1)
  [ -n "$want" ] || { bad "$name: no '// expect:' line"; continue; }
  read -r -a args <<< "$(sed -n 's|^// expect-args: ||p' "$f" | head -n 1)"
  inputs=()
  i=0
  while IFS= read -r expr; do
    "$py" -c "import numpy as np, sys; np.save(sys.argv[1], $expr)" "$tmp/$name.in$i.npy" \
      || { bad "$name: input $i: $expr"; continue 2; }
    inputs+=(--input "$tmp/$name.in$i.npy")
    i=$((i + 1))
  done < <(sed -n 's|^// expect-input: ||p' "$f")
  # A bug that does not show on every compile ("// expect-flaky:",
  # arbitrary values of uninitialized memory) gets five tries, the
  # check and its isolation alike.
  tries=1
  grep -q '^// expect-flaky:' "$f" && tries=5
  for try in $(seq "$tries"); do
  rm -rf "$tmp/$name.b"
  js=$("$trench" check "$f" --target "$target" "${args[@]}" "${inputs[@]}" --json --save "$tmp/$name.b" 2>"$tmp/err")
  got=$(printf '%s' "$js" | "$py" -c '
import json, sys
try: d = json.load(sys.stdin)
except ValueError: print("no-report"); sys.exit()
s = d.get("summary", "")
print(d.get("signature", {}).get("kind", "") if s == "finding" else ("declined" if d.get("declined") else s))')
  [ "$got" = "$want" ] && break
  done
  if [ "$got" = "$want" ]; then ok
  else
    bad "$name: expected $want on $target, got ${got:-nothing} (fixed? then update its expectation and docs/FINDINGS.md)"
    head -c 600 "$tmp/err"
  fi
  known=$(sed -n 's|^// expect-known: \([a-z0-9-]*\).*|\1|p' "$f" | head -n 1)
  [ -n "$known" ] || { bad "$name: no '// expect-known:' line"; continue; }
  seen="$seen $known "
  # Isolated on the check's bundle (the failing seed's inputs); a module
  # that passes (a fold that agrees with the reference) or whose finding
  # only the per-instruction check shows has nothing to isolate.
  case "$want" in pass|weak|declined|per-instruction-*) continue ;; esac
  [ "$got" = "$want" ] || continue
  for try in $(seq "$tries"); do
  "$trench" isolate "$tmp/$name.b" --target "$target" --no-passes --save "$tmp/$name.t" --json >"$tmp/iso.json" 2>"$tmp/err"
  gotk=$("$py" -c '
import json, sys
try: d = json.load(open(sys.argv[1]))
except ValueError: print("no-report"); sys.exit()
i = d.get("levels", {}).get("instruction", {})
print(i.get("known", "") or "none", "|", i.get("wrong_element", {}).get("text", ""), "|", i.get("note", ""))' "$tmp/iso.json")
  [ "${gotk%% *}" = "$known" ] && break
  done
  if [ "${gotk%% *}" = "$known" ]; then ok
  else
    bad "$name: trench isolate should name known bug $known, got: $gotk"
    head -c 400 "$tmp/err"
  fi
done
# Every recorded bug of this target family has a module here (seen:
# the expect-known lines, isolated or not).
for id in $(sed -n 's|^K("\([a-z0-9-]*\)", *"'"${target%%@*}"'".*|\1|p' "$root/src/triage/known.def"); do
  case "$seen" in *" $id "*) ok ;; *) bad "known.def's $id has no module in $tests/findings" ;; esac
done
finish
