#!/usr/bin/env bash
# End-to-end tests of `trench gen` (src/fuzz/gen.c, docs/FUZZ.md): modules
# that parse and verify, the same bytes for the same seed, the allow-lists,
# usage errors, and the built-in compiler (no defect planted) agreeing with
# the reference on generated modules: pass or weak, never a mismatch, crash
# or error. TRENCH_GEN_CHECKS sets how many modules that last check takes
# (default 60). Usage: tests/cli_gen.sh TRENCH TESTS_DIR
# Ends with "N passed, N failed".
set -u
trench=$1
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

# One module on stdout that parses and verifies; the same seed gives the
# same bytes, the next seed another module.
"$trench" gen --seed 7 > "$tmp/a.hlo" && ok || bad "gen --seed 7 failed"
"$trench" gen --seed 7 > "$tmp/b.hlo" && cmp -s "$tmp/a.hlo" "$tmp/b.hlo" && ok || bad "seed 7 twice differs"
# Any 64-bit seed, as campaign lineages record them (half are >= 2^63).
"$trench" gen --seed 18446744073709551615 > "$tmp/big.hlo" && "$trench" parse -q "$tmp/big.hlo" && ok || bad "gen --seed 2^64-1"
expect 2 "wants a number from 0 to 2\^64-1, not '-3'" -- "$trench" gen --seed -3
"$trench" gen --seed 8 > "$tmp/c.hlo" && ! cmp -s "$tmp/a.hlo" "$tmp/c.hlo" && ok || bad "seeds 7 and 8 give the same module"
expect 0 '' -- "$trench" parse -q "$tmp/a.hlo"
grep -q '^HloModule gen_7$' "$tmp/a.hlo" && ok || bad "module name is not gen_7"

# --count/--out: one file a seed, each verifies; stdout stays empty.
out=$("$trench" gen --seed 100 --count 20 --out "$tmp/many")
[ $? = 0 ] && [ -z "$out" ] && ok || bad "gen --count 20 --out"
n=$(ls "$tmp/many"/gen_*.hlo 2>/dev/null | wc -l)
[ "$n" = 20 ] && ok || bad "expected 20 files, found $n"
expect 0 '' -- "$trench" parse -q "$tmp/many"/gen_*.hlo
"$trench" gen --seed 119 | cmp -s - "$tmp/many/gen_119.hlo" && ok || bad "gen_119.hlo differs from gen --seed 119"

# Allow-lists: the chosen ops and element types appear.
"$trench" gen --seed 3 --ops dot --size 5 > "$tmp/dot.hlo" && grep -q ' dot(' "$tmp/dot.hlo" && ok || bad "--ops dot made no dot"
"$trench" gen --seed 3 --ops while --size 3 > "$tmp/w.hlo" && grep -q ' while(' "$tmp/w.hlo" && ok || bad "--ops while made no while"
"$trench" gen --seed 4 --dtypes bf16 --no-control > "$tmp/bf.hlo" && grep -q 'bf16\[' "$tmp/bf.hlo" && ok || bad "--dtypes bf16 made no bf16"
"$trench" gen --seed 5 --no-params > "$tmp/np.hlo" && ! grep -q 'parameter(' <(sed -n '/^ENTRY/,$p' "$tmp/np.hlo") && ok ||
  bad "--no-params module has entry parameters"
expect 0 '' -- "$trench" parse -q "$tmp/dot.hlo" "$tmp/w.hlo" "$tmp/bf.hlo" "$tmp/np.hlo"

# Usage errors.
expect 2 "unknown op 'frob'" -- "$trench" gen --ops add,frob
expect 2 "unknown element type 'f7'" -- "$trench" gen --dtypes f7
expect 2 'does not make' -- "$trench" gen --ops infeed
expect 2 '--count needs --out' -- "$trench" gen --count 3
expect 2 'wants a number' -- "$trench" gen --seed x
expect 0 'same bytes' -- "$trench" gen --help

# builtin without defects agrees with the reference on generated modules.
count=${TRENCH_GEN_CHECKS:-60}
"$trench" gen --seed 5000 --count "$count" --out "$tmp/agree" && ok || bad "gen for the agreement check"
res=$("$trench" check "$tmp/agree"/gen_*.hlo --target builtin --seeds 1 2>&1 | tail -n 1)
if [[ $res =~ ^check:\ ([0-9]+)\ modules,.*\ ([0-9]+)\ mismatch,\ [0-9]+\ unsupported,\ ([0-9]+)\ crash,\ ([0-9]+)\ other,\ ([0-9]+)\ errors ]] &&
   [ "${BASH_REMATCH[1]}" = "$count" ] && [ "${BASH_REMATCH[2]}" = 0 ] && [ "${BASH_REMATCH[3]}" = 0 ] &&
   [ "${BASH_REMATCH[4]}" = 0 ] && [ "${BASH_REMATCH[5]}" = 0 ]; then ok
else bad "builtin disagrees with the reference on generated modules: $res"; fi

finish
