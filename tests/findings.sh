#!/usr/bin/env bash
# The recorded XLA findings (tests/findings/, docs/FINDINGS.md) still
# reproduce on the pinned XLA: each module says what `trench check` must
# report ("// expect: KIND", KIND a finding's signature kind, or declined
# where the reference cannot judge it), with which options ("//
# expect-args:") and inputs ("// expect-input: NUMPY_EXPR", one per
# parameter leaf, written with the project venv's numpy). A release that
# fixes a bug fails its test: update the expectation and FINDINGS.md.
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
  js=$("$trench" check "$f" --target "$target" "${args[@]}" "${inputs[@]}" --json 2>"$tmp/err")
  got=$(printf '%s' "$js" | "$py" -c '
import json, sys
try: d = json.load(sys.stdin)
except ValueError: print("no-report"); sys.exit()
s = d.get("summary", "")
print(d.get("signature", {}).get("kind", "") if s == "finding" else ("declined" if d.get("declined") else s))')
  if [ "$got" = "$want" ]; then ok
  else
    bad "$name: expected $want on $target, got ${got:-nothing} (fixed? then update its expectation and docs/FINDINGS.md)"
    head -c 600 "$tmp/err"
  fi
done
finish
