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

# ---- out of memory: a located error, never an abort ----
# A long module (40,000 instructions) and a wide one (300 live f32[50000]
# values). TRENCH_ARENA_LIMIT makes the parser's allocations fail past a
# size, the path a real exhaustion takes; it also runs under ASan (where
# ulimit -v cannot), so the jump back to the parser leaks nothing.
awk 'BEGIN { print "HloModule long\nENTRY main {\n  p = f32[16] parameter(0)"; prev = "p";
  for (i = 0; i < 40000; i++) { printf "  a%d = f32[16] negate(%s)\n", i, prev; prev = "a" i }
  printf "  ROOT r = f32[16] negate(%s)\n}\n", prev }' > "$tmp/long.hlo"
awk 'BEGIN { print "HloModule wide\nENTRY main {\n  p = f32[50000] parameter(0)"; prev = "p"; t = ""; v = "";
  for (i = 0; i < 300; i++) { printf "  a%d = f32[50000] exponential(%s)\n", i, prev; prev = "a" i;
    t = t (i ? ", " : "") "f32[50000]"; v = v (i ? ", " : "") prev }
  printf "  ROOT r = (%s) tuple(%s)\n}\n", t, v }' > "$tmp/wide.hlo"
for lim in 1 600 20000 1M 8M; do
  for cmd in "parse -q" "run" "check --target interp --seeds 1"; do
    within 20 1 "long.hlo:[0-9]+:[0-9]+: error: out of memory: the module built so far holds [0-9]+ bytes" -- \
      env TRENCH_ARENA_LIMIT=$lim "$trench" $cmd "$tmp/long.hlo"
  done
done
within 20 0 '' -- env TRENCH_ARENA_LIMIT=64M "$trench" parse -q "$tmp/long.hlo"

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
within 2 2 '^check: declined \(.*big.hlo on interp\)' -- "$trench" check "$tmp/big.hlo" --target interp --max-memory 1G
# A result whose shadow form passes the tensor limit: the message names
# the shadow size and the limit it passes (25e9 > 17179869184).
printf 'HloModule over\nENTRY main {\n  p = f32[] parameter(0)\n  ROOT b = f32[1000000000] broadcast(p), dimensions={}\n}\n' > "$tmp/over.hlo"
within 10 2 'a result of 25000000000 bytes in shadow form .* is over the limit of 17179869184' -- \
  "$trench" check "$tmp/over.hlo" --target interp --seeds 1 --max-memory 0
expect 2 'max-memory needs a size' -- "$trench" run "$tmp/big.hlo" --max-memory lots
printf 'HloModule n\nENTRY main {\n  p = f32[1000] parameter(0)\n  ROOT n = f32[1000] negate(p)\n}\n' > "$tmp/neg1k.hlo"
# ---- the cost: a module whose work cannot finish before the reference's
# deadline is declined at once, not after it (a 16x128x128x1024 3x3
# convolution: 2.5e12 multiply-adds; it fits in memory) ----
cat > "$tmp/conv.hlo" <<'H'
HloModule hugeconv
ENTRY main {
  a = f32[16,128,128,1024] parameter(0)
  k = f32[3,3,1024,1024] parameter(1)
  ROOT c = f32[16,128,128,1024] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}
H
within 2 2 'trench check: declined: .*conv.hlo needs at least 2.47e\+12 scalar operations .*past its deadline of 60 s' -- \
  "$trench" check "$tmp/conv.hlo" --target interp --max-memory 0
within 2 1 'trench run: declined: .*conv.hlo needs at least .*deadline of 5 s' -- \
  "$trench" run "$tmp/conv.hlo" --max-memory 0 --ref-timeout 5
# --max-cost sets that budget in operations: the same convolution declined
# under 1e12, a 1,000-element negate declined under 100 and run under 1e4.
within 2 2 'trench check: declined: .*conv.hlo needs at least 2.47e\+12 scalar operations .*over the budget of 1e\+12 \(--max-cost\)' -- \
  "$trench" check "$tmp/conv.hlo" --target interp --max-memory 0 --max-cost 1e12
expect 1 'trench run: declined: .*neg1k.hlo needs at least 2e\+03 scalar operations .*over the budget of 100' -- \
  "$trench" run "$tmp/neg1k.hlo" --max-cost 100
expect 0 '^out0: f32\[1000\]' -- "$trench" run "$tmp/neg1k.hlo" --max-cost 1e4
expect 2 "--max-cost needs a number of operations" -- "$trench" run "$tmp/neg1k.hlo" --max-cost x
# A small module that would finish is not declined by a short deadline.
expect 0 '^out0: f32\[1000\]' -- "$trench" run "$tmp/neg1k.hlo" --ref-timeout 0.5
# An address-space limit (ulimit -v) cannot be combined with ASan, whose
# shadow memory needs terabytes of it: those cases run in plain builds.
asan=false
ldd "$trench" 2>/dev/null | grep -q libasan && asan=true
if ! $asan; then
# The default budget follows an address-space limit (ulimit -v).
sed 's/1000000000/20000000/g' "$tmp/big.hlo" > "$tmp/mid.hlo"
within 5 2 '^check: declined' -- bash -c "ulimit -v 400000; '$trench' check '$tmp/mid.hlo' --target interp --seeds 1"
# Without a budget, running out of memory (making an input, copying an
# argument, making a result: where depends on the address-space limit) is
# a diagnostic (exit 1), never an abort.
# Limits from too small to start to enough to finish: each run ends in a
# value (0) or an out-of-memory diagnostic (1), and some in the latter.
nom=0
for v in 200000 250000 300000 350000 400000 500000 700000; do
  out=$(timeout -k 2 20 bash -c "ulimit -v $v; '$trench' run '$tmp/mid.hlo' --max-memory 0" 2>&1)
  rc=$?
  if [ $rc = 0 ]; then ok
  elif [ $rc = 1 ] && printf '%s\n' "$out" | grep -q 'out of memory'; then ok; nom=$((nom + 1))
  elif [ $rc = 127 ] && printf '%s\n' "$out" | grep -q 'error while loading shared libraries'; then ok # too small to start
  else bad "ulimit -v $v: exit $rc"; printf '%s\n' "$out" | tail -3; fi
done
if [ $nom -gt 0 ]; then ok; else bad "no ulimit -v gave an out-of-memory diagnostic"; fi
# parse, run and check of a long module (the parser's and the verifier's
# allocations) and of a wide one (the evaluator's), under address-space
# limits from too small to enough: every run ends in a result or a clean
# error (an out-of-memory diagnostic, a declined module), never a signal.
for mc in "long:parse -q" "long:run --max-memory 0" "long:check --target interp --seeds 1 --max-memory 0" \
          "wide:run --max-memory 0" "wide:check --target interp --seeds 1 --max-memory 0"; do
  mod=${mc%%:*} cmd=${mc#*:}
  nom=0 nbad=0
  vs="12000 16000 20000 24000 28000 40000" # the parser's, then the verifier's room
  [ $mod = wide ] && vs="20000 30000 50000 80000"
  for v in $vs; do
    out=$(timeout -k 2 60 bash -c "ulimit -v $v; '$trench' $cmd '$tmp/$mod.hlo' > /dev/null" 2>&1)
    rc=$?
    if [ $rc = 0 ]; then :
    elif [ $rc -lt 124 ] && printf '%s\n' "$out" | grep -q 'out of memory'; then nom=$((nom + 1))
    elif [ $rc = 2 ] && printf '%s\n' "$out" | grep -q '^check: declined'; then :
    elif [ $rc = 127 ] && printf '%s\n' "$out" | grep -q 'error while loading shared libraries'; then : # too small to start
    else nbad=$((nbad + 1)); bad "$cmd $mod.hlo under ulimit -v $v: exit $rc"; printf '%s\n' "$out" | tail -3; fi
  done
  [ $nbad = 0 ] && ok
  if [ $nom -gt 0 ]; then ok; else bad "$cmd $mod.hlo: no ulimit -v gave an out-of-memory diagnostic"; fi
done
# A dot, a reduce, a sort, a concatenate and a reduce-window under the
# default memory budget (which follows the address-space limit): each run
# ends in a result, a declined module or an out-of-memory error.
cat > "$tmp/mix.hlo" <<'H'
HloModule mix
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY main {
  p = f32[512,512] parameter(0)
  q = f32[512,512] parameter(1)
  d = f32[512,512] dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[512,512] transpose(d), dimensions={1,0}
  c = f32[1024,512] concatenate(t, p), dimensions={0}
  z = f32[] constant(0)
  r = f32[1024] reduce(c, z), dimensions={1}, to_apply=add
  b = f32[1024,256] broadcast(r), dimensions={0}
  s = f32[1024,256] sort(b), dimensions={1}, to_apply=lt
  sl = f32[512,256] slice(s), slice={[0:512], [0:256]}
  w = f32[1024] reduce-window(r, z), window={size=3 pad=1_1}, to_apply=add
  ROOT o = (f32[512,256], f32[1024]) tuple(sl, w)
}
H
for cmd in "run" "run --shadow" "check --target interp --seeds 1"; do
  nbad=0
  for v in 18000 22000 26000 30000 40000 60000; do
    out=$(timeout -k 2 60 bash -c "ulimit -v $v; '$trench' $cmd '$tmp/mix.hlo' > /dev/null" 2>&1)
    rc=$?
    if [ $rc -le 2 ] && ! printf '%s\n' "$out" | grep -q 'internal error'; then :
    elif [ $rc = 127 ] && printf '%s\n' "$out" | grep -q 'error while loading shared libraries'; then :
    else nbad=$((nbad + 1)); bad "$cmd mix.hlo under ulimit -v $v: exit $rc"; printf '%s\n' "$out" | tail -3; fi
  done
  [ $nbad = 0 ] && ok
done
fi

# ---- process targets that misbehave (tests/adapters/bad_adapter.py) ----
bad="cmd:python3 $tests/adapters/bad_adapter.py"
printf 'HloModule neg\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n' > "$tmp/neg.hlo"
printf 'HloModule add\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] add(p, p)\n}\n' > "$tmp/add.hlo"
# Reply paths: only regular files inside the request's folder are read.
within 20 1 "seed 0: protocol_error: output 0: '/dev/zero' is outside the request's folder" -- \
  "$trench" check "$tmp/neg.hlo" --seeds 1 --target "$bad dev-zero"
within 20 1 "seed 0: protocol_error: output 0: '.*/out/fifo.npy' is not a regular file" -- \
  "$trench" check "$tmp/neg.hlo" --seeds 1 --target "$bad fifo"
within 20 1 "seed 0: protocol_error: output 0: '.*bad_adapter.py' is outside the request's folder" -- \
  "$trench" check "$tmp/neg.hlo" --seeds 1 --target "$bad outside"
# A target that deletes trench's private folder: the next module runs.
within 20 1 '^check: pass \(.*add.hlo on' -- \
  "$trench" check "$tmp/neg.hlo" "$tmp/add.hlo" --seeds 1 --target "$bad rm-folder"
# Processes an adapter leaves behind, found by the marker in their
# environment (bad_adapter.py gives it to its helpers); each marker is
# unique to this run of the tier.
orphans() { grep -lzx "TRENCH_FAULT_MARKER=$1" /proc/[0-9]*/environ 2>/dev/null | sed 's,/proc/,,; s,/environ,,'; }
no_orphan() { # no_orphan MARKER WHAT: none may be left; kills what is
  local left; left=$(orphans "$1")
  if [ -z "$left" ]; then ok; else bad "$2: processes left behind: $left"; kill -9 $left 2>/dev/null; fi
}
mk="trench-fault-$$"
# A crash whose helper left the process group (setsid) and holds stdout:
# a crash, not a hang, the next module is checked, and the helper is gone.
within 20 1 'seed 0: crash: the target exited with status 3' -- \
  "$trench" check "$tmp/neg.hlo" --seeds 1 --timeout 30 --target "$bad setsid-crash 30 $mk-sc"
no_orphan "$mk-sc" "setsid helper of a crashed adapter"
# After a crash the next module passes (a restart, not a hang); the
# daemon (setsid, double fork) of the crashed adapter and of the restarted
# one are both gone: the first at the restart, the second at the exit.
within 20 1 '^check: pass \(.*add.hlo on' -- \
  "$trench" check "$tmp/neg.hlo" "$tmp/add.hlo" --seeds 1 --target "$bad daemon $mk-re crash negate"
no_orphan "$mk-re" "daemons of a crashed and a restarted adapter"
# A normal exit (the adapter answers shutdown and exits 0).
within 20 0 '^check: pass' -- "$trench" check "$tmp/add.hlo" --seeds 1 --target "$bad daemon $mk-ok echo"
no_orphan "$mk-ok" "daemon of an adapter that exited normally"
# A hang: the adapter is killed, with its daemon.
within 20 1 'seed 0: hang' -- "$trench" check "$tmp/neg.hlo" --seeds 1 --timeout 1 --target "$bad daemon $mk-hg hang"
no_orphan "$mk-hg" "daemon of a hung adapter"
# A compile error on a module holding a form compilers make themselves
# (ops.def flag P: bitcast, fusion) is the input contract: unsupported,
# naming the form; on any other module it is a finding.
printf 'HloModule bc\nENTRY main {\n  p = f32[4] parameter(0)\n  b = f32[4] bitcast(p)\n  ROOT n = f32[4] negate(b)\n}\n' > "$tmp/bitcast.hlo"
within 20 0 'holds %b, a bitcast, which compilers make in their own pipeline.*refused: bitcast' -- \
  "$trench" check "$tmp/bitcast.hlo" --seeds 1 --target "$bad refuse bitcast"
within 20 1 'seed 0: compile_error: refused: negate' -- "$trench" check "$tmp/neg.hlo" --seeds 1 --target "$bad refuse negate"
# A hang saved as a bundle waits out its timeout once: the module is not
# run a second time for its optimized form.
within 9 1 'seed 0: hang' -- "$trench" check "$tmp/neg.hlo" --seeds 1 --timeout 5 --save "$tmp/hang-save" --target "$bad hang"
# hello obeys --start-timeout, in every command that opens a target.
within 5 2 "no reply to 'hello' within 1 s" -- \
  "$trench" check "$tmp/neg.hlo" --seeds 1 --start-timeout 1 --target "$bad slow-hello 30"
# A module over the memory budget is declined before the target starts:
# a target that takes 30 s to say hello is not waited for.
within 2 2 '^check: declined \(.*big.hlo on cmd:' -- \
  "$trench" check "$tmp/big.hlo" --seeds 1 --max-memory 1G --target "$bad slow-hello 30"
within 5 2 "no reply to 'hello' within 1 s" -- \
  "$trench" isolate "$tmp/neg.hlo" --start-timeout 1 --target "$bad slow-hello 30"
within 5 2 "no reply to 'hello' within 1 s" -- \
  "$trench" reduce "$tmp/neg.hlo" --start-timeout 1 --target "$bad slow-hello 30"
within 8 2 "does not start: .*no reply to 'hello' within 1 s" -- \
  "$trench" fuzz --count 2 -q --no-corpus --out "$tmp/fuzz-hello" --start-timeout 1 --target "$bad slow-hello 30"
printf 'module @m {\n  func.func @main(%%a: tensor<4xf32>) -> tensor<4xf32> {\n    return %%a : tensor<4xf32>\n  }\n}\n' > "$tmp/id.mlir"
within 5 2 "no reply to 'hello' within 1 s" -- \
  "$trench" run "$tmp/id.mlir" --start-timeout 1 --convert "$bad slow-hello 30"
expect 2 'start-timeout needs seconds > 0' -- "$trench" isolate "$tmp/neg.hlo" --start-timeout 0
# A target that cannot restart is given up after two tries; the run goes
# on to its last module and summary without waiting on it again.
within 30 1 'check: 4 modules, 8 checks: .* 5 unsupported, 3 crash' -- \
  "$trench" check "$tmp/neg.hlo" "$tmp/add.hlo" "$tmp/add.hlo" "$tmp/add.hlo" --seeds 2 --start-timeout 4 \
  --target "$bad crash-then-dead $tmp/marker"

# ---- interrupted: no adapter, no process it started and no temp folder
# outlive trench ----
alive() { [ -e "/proc/$1" ] && ! grep -q '^State:.*Z' "/proc/$1/status"; }
for sig in TERM INT HUP; do
  mkdir -p "$tmp/sig$sig"
  TMPDIR="$tmp/sig$sig" "$trench" check "$tmp/neg.hlo" --seeds 1 --timeout 100 \
    --target "$bad daemon $mk-$sig pidfile $tmp/pid$sig hang" > /dev/null 2>&1 &
  tp=$!
  for _ in $(seq 1 100); do [ -s "$tmp/pid$sig" ] && break; sleep 0.1; done
  sleep 0.5 # the run request is out: the adapter is hanging in it
  ap=$(cat "$tmp/pid$sig" 2>/dev/null)
  kill -$sig $tp
  { wait $tp; } 2>/dev/null
  rc=$?
  sleep 0.2
  if [ -n "$ap" ] && ! alive "$ap" && [ -z "$(ls -A "$tmp/sig$sig")" ] && [ $rc -gt 128 ]; then ok
  else bad "SIG$sig: trench exit $rc, adapter ${ap:-?} $(alive "${ap:-0}" && echo alive || echo gone), left: $(ls "$tmp/sig$sig")"
    [ -n "$ap" ] && alive "$ap" && kill -9 "$ap"
  fi
  no_orphan "$mk-$sig" "SIG$sig: the adapter's daemon"
done
# kill -9 cannot be handled, but the keeper sees trench die (its parent-
# death signal) and ends the adapter's tree and removes the private
# folder on its own, within a moment.
mkdir -p "$tmp/sigKILL"
TMPDIR="$tmp/sigKILL" "$trench" check "$tmp/neg.hlo" --seeds 1 --timeout 100 \
  --target "$bad daemon $mk-KILL pidfile $tmp/pidKILL hang" > /dev/null 2>&1 &
tp=$!
for _ in $(seq 1 100); do [ -s "$tmp/pidKILL" ] && break; sleep 0.1; done
sleep 0.5
ap=$(cat "$tmp/pidKILL" 2>/dev/null)
kill -9 $tp
{ wait $tp; } 2>/dev/null
for _ in $(seq 1 30); do [ -z "$(orphans "$mk-KILL")$(ls -A "$tmp/sigKILL")" ] && ! alive "${ap:-0}" && break; sleep 0.1; done
if [ -n "$ap" ] && ! alive "$ap"; then ok; else bad "SIGKILL: adapter ${ap:-?} outlived trench"; [ -n "$ap" ] && kill -9 "$ap"; fi
if [ -z "$(ls -A "$tmp/sigKILL")" ]; then ok; else bad "SIGKILL: left $(ls "$tmp/sigKILL")"; fi
no_orphan "$mk-KILL" "SIGKILL: the adapter's daemon"

# Triage and trench verify, interrupted: isolate and reduce on a hanging
# adapter leave no adapter, helper or private folder; trench verify
# (random mode: a long run) leaves no scratch folder.
for cmd in isolate reduce; do
  mkdir -p "$tmp/tg$cmd"
  TMPDIR="$tmp/tg$cmd" "$trench" $cmd "$tmp/neg.hlo" --seeds 1 --timeout 100 \
    --target "$bad daemon $mk-$cmd pidfile $tmp/pid$cmd hang" > /dev/null 2>&1 &
  tp=$!
  for _ in $(seq 1 100); do [ -s "$tmp/pid$cmd" ] && break; sleep 0.1; done
  sleep 0.5
  ap=$(cat "$tmp/pid$cmd" 2>/dev/null)
  kill -TERM $tp
  { wait $tp; } 2>/dev/null
  rc=$?
  sleep 0.2
  if [ -n "$ap" ] && ! alive "$ap" && [ -z "$(ls -A "$tmp/tg$cmd")" ] && [ $rc -gt 128 ]; then ok
  else bad "$cmd, SIGTERM: exit $rc, adapter ${ap:-?} $(alive "${ap:-0}" && echo alive || echo gone), left: $(ls "$tmp/tg$cmd")"
    [ -n "$ap" ] && alive "$ap" && kill -9 "$ap"
  fi
  no_orphan "$mk-$cmd" "$cmd, SIGTERM: the adapter's daemon"
done
if [ -x "$(dirname "$trench")/trench-verify" ]; then
  mkdir -p "$tmp/tv"
  TMPDIR="$tmp/tv" "$trench" verify --ref "$tests/kernels/matmul.hlo" --kernel "$tests/kernels/matmul_ok.c" \
    --random 1000000 > /dev/null 2>&1 &
  tp=$!
  for _ in $(seq 1 100); do [ -n "$(ls -A "$tmp/tv")" ] && break; sleep 0.1; done
  sleep 0.5
  seen=$(ls "$tmp/tv")
  kill -INT $tp
  { wait $tp; } 2>/dev/null
  rc=$?
  if [ -n "$seen" ] && [ -z "$(ls -A "$tmp/tv")" ] && [ $rc -gt 128 ]; then ok
  else bad "verify, SIGINT: exit $rc, scratch ${seen:-never made}, left: $(ls "$tmp/tv")"; fi
fi

# ---- a full TMPDIR is trench's error, not the target's crash ----
# A small tmpfs in a private mount namespace (unshare -rm: no root needed
# where user namespaces are allowed).
if unshare -rm true 2>/dev/null; then
  printf 'HloModule big\nENTRY main {\n  p = f32[100000] parameter(0)\n  ROOT n = f32[100000] negate(p)\n}\n' > "$tmp/in.hlo"
  printf 'HloModule out\nENTRY main {\n  p = f32[30000] parameter(0)\n  ROOT n = f32[30000] negate(p)\n}\n' > "$tmp/out.hlo"
  mkdir -p "$tmp/small"
  full=(unshare -rm bash -c 'mount -t tmpfs -o size=160k tmpfs "$0" && TMPDIR="$0" "$@"' "$tmp/small")
  # inputs that do not fit: trench cannot write its request
  within 20 2 'in0.npy: write error: No space left on device' -- \
    "${full[@]}" "$trench" check "$tmp/in.hlo" --seeds 1 --target "cmd:python3 $root/adapters/example/echo_adapter.py"
  # outputs that do not fit: the target fails to write them
  within 20 2 "trench's temp space is full \(TMPDIR\), so the target's error is not a finding" -- \
    "${full[@]}" "$trench" check "$tmp/out.hlo" --seeds 1 --target "cmd:python3 $root/adapters/example/echo_adapter.py"
else
  echo "SKIP: full-disk cases (cannot mount a tmpfs here: unshare -rm is not allowed)"
fi

finish
