#!/usr/bin/env bash
# fault_san.sh - a mutation run of parse, run and check for a sanitizer
# build (`make fault-san`): modules mutated by `trench mutate` (verified
# mutants) and by flipping bytes of the text (parser input), each parsed,
# evaluated and checked against the reference target. Any sanitizer
# report, abort or exit status above 2 is a failure; a mutant may
# otherwise be rejected, declined or unsupported. Runs for about
# FAULT_SAN_SECONDS (default 120) seconds.
# Usage: tests/fault_san.sh TRENCH TESTS_DIR. Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
. "$tests/lib.sh"
budget=${FAULT_SAN_SECONDS:-120}
end=$(( $(date +%s) + budget ))
files=("$tests"/hlo/*.hlo)
i=0
for f in "$tests"/xla-suite/*.hlo; do
  [ $((i++ % 10)) = 0 ] && files+=("$f")
done
[ ${#files[@]} -gt 10 ] || { bad "no corpus in $tests/hlo and $tests/xla-suite"; finish; exit; }
runs=0
# sane CMD...: runs CMD; fails on a sanitizer report, a signal or exit > 2.
sane() {
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  runs=$((runs + 1))
  if [ $rc -gt 2 ] || grep -Eq 'AddressSanitizer|LeakSanitizer|runtime error:|internal error' "$tmp/err"; then
    bad "exit $rc: $* ($(cp "$tmp/m.hlo" "$tmp/fail$fail.hlo"; echo "module kept as fail$fail.hlo"))"
    tail -20 "$tmp/err"
    return 1
  fi
  ok
}
seed=0
while [ "$(date +%s)" -lt "$end" ]; do
  f=${files[$((seed % ${#files[@]}))]}
  seed=$((seed + 1))
  if [ $((seed % 3)) = 0 ]; then
    # bytes flipped: the parser's input
    python3 - "$f" "$seed" > "$tmp/m.hlo" <<'PY'
import random, sys
data = bytearray(open(sys.argv[1], "rb").read())
r = random.Random(int(sys.argv[2]))
for _ in range(r.randint(1, 4)):
    if data:
        data[r.randrange(len(data))] = r.choice(b"0123456789{}[](),=%:.-x \n" + bytes([r.randrange(256)]))
sys.stdout.buffer.write(bytes(data))
PY
    sane "$trench" parse "$tmp/m.hlo" || continue
  else
    "$trench" mutate "$f" --seed "$seed" --steps 2 -o "$tmp/m.hlo" 2> /dev/null || continue
  fi
  "$trench" parse "$tmp/m.hlo" > /dev/null 2>&1 || continue
  sane "$trench" run "$tmp/m.hlo" --max-memory 256M --ref-timeout 5 --max-trips 100000 || continue
  sane "$trench" check "$tmp/m.hlo" --target interp --seeds 1 --max-memory 256M --timeout 5 || continue
done
echo "fault_san: $seed modules, $runs runs in ${budget}s"
finish
