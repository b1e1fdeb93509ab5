#!/usr/bin/env bash
# fault.sh - the fault-injection tier: inputs that are not files, endless
# pipes, modules past the memory budget, and process targets that
# misbehave (tests/adapters/bad_adapter.py). Each case must end in a clear
# verdict or error within its deadline, never an abort, a hang, an orphan
# process or a leaked temp folder (docs/CLI.md, "Limits").
# Usage: tests/fault.sh TRENCH TESTS_DIR. Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
. "$tests/lib.sh"
# within SECS RC PATTERN -- CMD...: expect, under a wall-clock deadline
# (timeout's 124 is then a failure, a hang).
within() {
  local secs=$1; shift
  local want=$1 pat=$2; shift 3
  expect "$want" "$pat" -- timeout -k 2 "$secs" "$@"
}
m="$tests/hlo/binary_arith_short.hlo"

# ---- bounded reads: regular files only, a size cap ----
within 5 2 'not a regular file \(a device\)' -- "$trench" parse /dev/zero
within 5 2 'not a regular file \(a folder\)' -- "$trench" parse "$tests"
mkfifo "$tmp/fifo"
within 5 2 'not a regular file \(a FIFO\)' -- "$trench" parse "$tmp/fifo"
within 10 2 '<stdin>: larger than the read limit of 1048576 bytes' -- \
  env TRENCH_MAX_INPUT=1M bash -c "yes | '$trench' parse -"
head -c 2000000 /dev/zero > "$tmp/big.hlo"
within 5 2 'big.hlo: larger than the read limit of 1048576 bytes' -- \
  env TRENCH_MAX_INPUT=1M "$trench" parse "$tmp/big.hlo"
within 5 2 'not a regular file \(a device\)' -- "$trench" run "$m" --input /dev/zero --input /dev/zero --input /dev/zero --input /dev/zero
within 5 2 'not a regular file' -- "$trench" check "$m" --target interp --input /dev/zero --input /dev/zero --input /dev/zero --input /dev/zero
within 5 2 'not a regular file \(a device\)' -- "$trench" check "$m" --target interp --profile /dev/zero

# ---- the memory budget: declined before allocating, within a second ----
cat > "$tmp/big.hlo" <<'H'
HloModule big
ENTRY main {
  p = f32[1000000000] parameter(0)
  ROOT n = f32[1000000000] negate(p)
}
H
within 2 1 'trench run: declined: .*big.hlo needs about 14.9 GiB .* over the memory budget of 1.0 GiB' -- \
  "$trench" run "$tmp/big.hlo" --max-memory 1G
within 2 0 '^check: declined \(.*big.hlo on interp\)' -- "$trench" check "$tmp/big.hlo" --target interp --max-memory 1G
expect 2 'max-memory needs a size' -- "$trench" run "$tmp/big.hlo" --max-memory lots
# The default budget follows an address-space limit (ulimit -v).
sed 's/1000000000/20000000/g' "$tmp/big.hlo" > "$tmp/mid.hlo"
within 5 0 '^check: declined' -- bash -c "ulimit -v 400000; '$trench' check '$tmp/mid.hlo' --target interp --seeds 1"
# Without a budget, running out of memory copying a legal argument is a
# located diagnostic (exit 1), not an abort.
within 20 1 'in %p: unsupported: out of memory copying a f32\[20000000\] value' -- \
  bash -c "ulimit -v 150000; '$trench' run '$tmp/mid.hlo' --max-memory 0"

finish
