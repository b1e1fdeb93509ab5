#!/usr/bin/env bash
# The module XLA receives (docs/PROTOCOL.md, "The module XLA receives"), on
# real XLA CPU: trench check compares XLA's before-optimizations module
# with the module sent and says when it changed (a reshape chain the MLIR
# canonicalizer folds), says when it did not, and takes StableHLO as jax
# writes it: compiled unchanged, the reference on XLA's conversion, both
# kept in the bundle. Ends with "N passed, N failed".
# Usage: tests/adapters/xla_received.sh [BUILD_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build}
trench=$build/trench
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { # ok NAME COND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}
has() { printf '%s\n' "$out" | grep -q -- "$1"; }
cat > "$tmp/chain.hlo" <<'HLO'
HloModule chain
ENTRY e {
  p = f32[2,3] parameter(0)
  r1 = f32[6] reshape(p)
  r2 = f32[3,2] reshape(r1)
  ROOT b = f32[3,2] add(r2, r2)
}
HLO
out=$("$trench" check "$tmp/chain.hlo" --target xla-cpu --seeds 2 --show-received 2>&1)
ok "chain: the folded chain is named an equivalent form" has "^received: an equivalent form of the module sent: .* reshape chains"
ok "chain: the diff shows the folded chain" has "^  - f32\[6\] reshape(parameter)"
ok "chain: the summary says so" has "^check: pass (.*chain.hlo on xla-cpu; it received an equivalent form)"
out=$("$trench" check "$tmp/chain.hlo" --target xla-cpu --seeds 1 --json 2>&1)
ok "chain: json received.same false" has '"same":[[:space:]]*false'
ok "chain: json received.equivalent true" has '"equivalent":[[:space:]]*true'
# A computation the MLIR trip folds (negate of a constant) is another
# program: still CHANGED.
cat > "$tmp/fold.hlo" <<'HLO'
HloModule fold
ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  n = f32[4] negate(c)
  ROOT a = f32[4] add(p, n)
}
HLO
out=$("$trench" check "$tmp/fold.hlo" --target xla-cpu --seeds 1 --show-received 2>&1)
ok "fold: a folded computation is CHANGED" has "^received: CHANGED before the target's passes"
ok "fold: the summary says so" has "^check: pass (.*fold.hlo on xla-cpu; the module it received was changed)"
out=$("$trench" check "$root/tests/hlo/convolution.hlo" --target xla-cpu --seeds 1 2>&1)
ok "convolution: received unchanged" has "^received: the target compiled the module sent"
mlir=$here/mlir/jit_sin_reshape_dot.mlir
out=$("$trench" check "$mlir" --target xla-cpu --seeds 2 --save "$tmp/b" 2>&1)
ok "stablehlo: checked exactly as XLA gets it" has "^received: the target compiled the module sent"
ok "stablehlo: pass" has "^check: pass (.*jit_sin_reshape_dot.mlir on xla-cpu)$"
ok "stablehlo: bundle keeps both forms" test -s "$tmp/b/module.mlir" -a -s "$tmp/b/module.hlo"
ok "stablehlo: the conversion folded the chain" grep -q "f32\[3,2\]{1,0} reshape(.*sine" "$tmp/b/module.hlo"
out=$("$trench" check "$tmp/b/module.mlir" --target xla-cpu --seeds 1 2>&1)
ok "stablehlo: the bundle reproduces" has "^check: pass"
out=$("$trench" run "$mlir" --seed 1 2>&1)
ok "stablehlo: run evaluates the conversion" has "^out0: f32\[3,4\]"
out=$("$trench" check "$mlir" --target interp --seeds 1 2>&1)
rc=$?
ok "stablehlo: a target that cannot convert is a usage error" test "$rc" = 2
# StableHLO in the fuzzer's corpus: XLA's conversion is what gets mutated,
# and the mutants reach XLA as HLO text (docs/FUZZ.md).
out=$("$trench" fuzz --target xla-cpu --corpus "$here/mlir" --no-gen --count 3 --seeds 1 --out "$tmp/fz" -q 2>&1)
ok "fuzz: a .mlir corpus runs" has "^  tests  *3 "
ok "fuzz: its lineage names the .mlir file" grep -q '"lineage":\["corpus:[^"]*jit_sin_reshape_dot.mlir"' "$tmp/fz/log.jsonl"
out=$("$trench" fuzz --target interp --corpus "$here/mlir" --no-gen --count 1 --out "$tmp/fz2" -q 2>&1)
rc=$?
ok "fuzz: a target that cannot convert skips the file" has "corpus file skipped: .*needs a target that converts it to HLO"
ok "fuzz: and then has nothing to test" test "$rc" = 2
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
