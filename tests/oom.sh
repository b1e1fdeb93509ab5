#!/usr/bin/env bash
# oom.sh - running out of memory anywhere is a verdict, never an abort
# (issues 11 and 16). TRENCH_HEAP_FAIL=N makes the Nth allocation inside a
# heap frame fail (src/base/base.h): the evaluators (exact and shadow), the
# built-in compiler's passes, emitter and run, a target's reply and each
# module's check. For modules with dot, convolution, fft, sort, cholesky,
# triangular-solve, while, gather, scatter and reduce-window, a sweep of N
# over run, run --shadow, check --target builtin and compile --run must end
# every time in a clean exit (no signal, no "internal error", no sanitizer
# report: under ASan a leak on the way out fails it too), never in a
# finding, and the sweep must reach a run that completes. N follows a
# geometric series (fast, for make check); TRENCH_OOM_STEP=K takes every
# Kth N (make fault-san: 5). Then: a campaign goes on after a module runs out of
# memory, and address-space limits (ulimit -v, plain builds only) on a big
# dot and convolution end in a value or a diagnostic.
# Usage: tests/oom.sh TRENCH TESTS_DIR. Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
. "$tests/lib.sh"

modules="xla-suite/dot_batch_f32.hlo xla-suite/convolution_basic_f32.hlo eval/dtypes/fft.hlo
  xla-suite/sort_dim0_f32.hlo xla-suite/cholesky_f32.hlo xla-suite/triangular-solve_f32.hlo
  eval/factorial_loop.hlo xla-suite/gather_f32.hlo xla-suite/scatter_add_f32.hlo
  xla-suite/reduce-window_basedil_add_f32.hlo"
modes=("run" "run --shadow" "check --target builtin --seeds 1" "compile --run")
if [ -n "${TRENCH_OOM_STEP:-}" ]; then
  points=$(seq 1 "$TRENCH_OOM_STEP" 20000)
else
  points="1 2 3 5 8 13 21 34 55 89 144 233 377 610 987 1597 2584 4181"
fi

# sweep MODULE MODE: every injection point ends cleanly; some hit; the
# last one completes (the injection point lies past the whole run).
sweep() {
  local mod=$1 mode=$2 n out rc hits=0 done=false allowed
  case $mode in
    run*) allowed=" 0 1 " ;;   # run: 1 is an evaluation error (a diagnostic)
    *) allowed=" 0 2 " ;;      # check, compile --run: 1 would be a finding
  esac
  for n in $points; do
    # shellcheck disable=SC2086
    out=$(TRENCH_HEAP_FAIL=$n timeout -k 2 60 "$trench" $mode "$tests/$mod" 2>&1)
    rc=$?
    if [[ $allowed != *" $rc "* ]] ||
       printf '%s\n' "$out" | grep -Eq 'internal error|Sanitizer|runtime error|^check: finding|compile_error'; then
      bad "$mod $mode: TRENCH_HEAP_FAIL=$n: exit $rc"
      printf '%s\n' "$out" | grep -v '^seed .*: pass' | head -8
      return
    fi
    if printf '%s\n' "$out" | grep -q 'out of memory'; then
      # The verdict names what ran out: an instruction, or the work.
      if ! printf '%s\n' "$out" | grep -Eq 'out of memory (evaluating|compiling|checking|emitting|sending|for )|cannot make the result'; then
        bad "$mod $mode: TRENCH_HEAP_FAIL=$n: an out-of-memory message of no known form"
        printf '%s\n' "$out" | grep 'out of memory' | head -3
        return
      fi
      hits=$((hits + 1))
    else
      done=true
      break
    fi
  done
  if [ $hits -gt 0 ] && $done; then ok
  else bad "$mod $mode: $hits injections hit, completed: $done"; fi
}
for mod in $modules; do
  for mode in "${modes[@]}"; do sweep "$mod" "$mode"; done
done

# The verdict of an evaluation names the instruction it was evaluating.
expect 1 'dot_batch_f32.hlo:[0-9]+:[0-9]+: error: out of memory evaluating %[a-z.0-9]+ \([0-9]+ bytes\)' -- \
  env TRENCH_HEAP_FAIL=30 "$trench" run "$tests/xla-suite/dot_batch_f32.hlo"

# A campaign goes on: the first module runs out of memory (declined, not a
# finding), the second is checked as usual.
out=$(TRENCH_HEAP_FAIL=40 "$trench" check --target builtin --seeds 1 "$tests/xla-suite/dot_batch_f32.hlo" \
  "$tests/xla-suite/gather_f32.hlo" 2>&1)
if printf '%s\n' "$out" | grep -q '^check: declined (.*dot_batch_f32.hlo' &&
   printf '%s\n' "$out" | grep -q '^check: pass (.*gather_f32.hlo'; then ok
else bad "check after an out-of-memory module"; printf '%s\n' "$out" | tail -5; fi

# A process target: out of memory while writing the request or reading the
# reply is the run's verdict (unsupported, not the target's crash), the
# child is restarted for the next run, and nothing leaks.
root=$(cd "$tests/.." && pwd)
echo_t="cmd:python3 $root/adapters/example/echo_adapter.py"
nreply=0
for n in $(seq 1 "${TRENCH_OOM_STEP:-13}" 260); do
  out=$(TRENCH_HEAP_FAIL=$n timeout -k 2 60 "$trench" check --target "$echo_t" --seeds 1 "$tests/xla-suite/gather_f32.hlo" 2>&1)
  rc=$?
  if { [ $rc != 0 ] && [ $rc != 2 ]; } || printf '%s\n' "$out" | grep -Eq 'internal error|Sanitizer|runtime error|^check: finding'; then
    bad "check on the echo adapter, TRENCH_HEAP_FAIL=$n: exit $rc"; printf '%s\n' "$out" | tail -4
  fi
  printf '%s\n' "$out" | grep -q 'out of memory sending the module to the target or reading its reply' && nreply=$((nreply + 1))
done
if [ $nreply -gt 0 ]; then ok; else bad "no injection hit the process target's request or reply"; fi

# Triage and trench verify (issue 16): isolate and reduce run each level
# in a heap frame, and a check, run or reference that ran out of memory
# stops the level (never read as "passes"); trench verify runs in a frame,
# its Z3 queries in frames of their own. A sweep of N ends every time in an
# allowed exit with no signal, internal error or sanitizer report, leaves
# nothing in TMPDIR, and (reduce --save) a bundle that is there whole or
# not at all, with no temporary folder beside it; some N hit, and the sweep
# reaches a run that completes. N grows geometrically (x1.15 under
# TRENCH_OOM_STEP, for make fault-san).
if [ -n "${TRENCH_OOM_STEP:-}" ]; then
  tpoints=$(awk 'BEGIN { for (n = 1; n < 400000; n = int(n * 1.15) + 1) print n }')
else
  tpoints="1 3 8 21 55 144 377 987 2584 6765 17711 46368 121393 317811"
fi
oomform='out of memory (evaluating|compiling|checking|emitting|sending|for |triaging|isolating|validating|disabling|reducing|verifying|writing)|cannot make the result'
# tsweep NAME "ALLOWED RCS" DONE_RC SAVE -- CMD...: SAVE is the --save folder
# CMD writes ("" when none).
tsweep() {
  local name=$1 allowed=" $2 " done_rc=$3 save=$4 n out rc hits=0 done=false
  shift 5
  for n in $tpoints; do
    rm -rf "$tmp/td" "$save"
    mkdir -p "$tmp/td"
    out=$(TMPDIR="$tmp/td" TRENCH_HEAP_FAIL=$n timeout -k 2 120 "$@" 2>&1)
    rc=$?
    if [[ $allowed != *" $rc "* ]] || printf '%s\n' "$out" | grep -Eq 'internal error|Sanitizer|runtime error|LLVM failed'; then
      bad "$name: TRENCH_HEAP_FAIL=$n: exit $rc"; printf '%s\n' "$out" | tail -6; return
    fi
    if [ -n "$(ls -A "$tmp/td")" ]; then
      bad "$name: TRENCH_HEAP_FAIL=$n: left $(ls "$tmp/td" | head -3 | tr '\n' ' ')in TMPDIR"; return
    fi
    if [ -n "$save" ]; then
      if ls -d "$save".tmp-* >/dev/null 2>&1; then bad "$name: TRENCH_HEAP_FAIL=$n: a temporary bundle folder is left"; return; fi
      if [ -e "$save" ] && ! { [ -f "$save/report.json" ] && [ -f "$save/report.md" ] && [ -f "$save/module.hlo" ]; }; then
        bad "$name: TRENCH_HEAP_FAIL=$n: a partial bundle: $(ls "$save" | tr '\n' ' ')"; return
      fi
      if [ "$rc" = 1 ] && [ ! -e "$save" ]; then bad "$name: TRENCH_HEAP_FAIL=$n: a triaged finding without its bundle"; return; fi
    fi
    if printf '%s\n' "$out" | grep -q 'out of memory'; then
      if ! printf '%s\n' "$out" | grep -Eq "$oomform"; then
        bad "$name: TRENCH_HEAP_FAIL=$n: an out-of-memory message of no known form"
        printf '%s\n' "$out" | grep 'out of memory' | head -3; return
      fi
      hits=$((hits + 1))
    elif [ "$rc" = "$done_rc" ]; then
      done=true
      break
    fi
  done
  if [ $hits -gt 0 ] && $done; then ok
  else bad "$name: $hits injections hit, completed: $done"; fi
}
d="$tests/defects"
spec=builtin:inject=simplify-slice-of-slice-stride
tsweep "reduce --save" "1 2" 1 "$tmp/tb" -- "$trench" reduce "$d/simplify-slice-of-slice-stride.hlo" \
  --target "$spec" --seeds 1 --save "$tmp/tb"
tsweep "isolate (codegen, kernel level)" "1 2" 1 "" -- "$trench" isolate "$d/emit-tail-mask-short.hlo" \
  --target builtin:inject=emit-tail-mask-short --seeds 1
# A level that runs out of memory says so in the report, and the report
# is still written whole.
out=$(TRENCH_HEAP_FAIL=400 "$trench" reduce "$d/simplify-slice-of-slice-stride.hlo" --target "$spec" --seeds 1 \
  --save "$tmp/tl" 2>&1)
if printf '%s\n' "$out" | grep -Eq '\| (instruction|passes|kernel|disable|fuel|reduce) +\| error .*out of memory' &&
   [ -f "$tmp/tl/report.json" ] && grep -Eq '"state":[[:space:]]*"error"' "$tmp/tl/report.json"; then ok
else bad "reduce, TRENCH_HEAP_FAIL=400: no level in error with its out-of-memory note"; printf '%s\n' "$out" | grep -i 'memory' | head -3; fi
# A bundle already there is replaced whole, never mixed with the new one.
rm -rf "$tmp/tm"; mkdir -p "$tmp/tm"; echo stale > "$tmp/tm/stale.txt"
"$trench" reduce "$d/simplify-slice-of-slice-stride.hlo" --target "$spec" --seeds 1 --save "$tmp/tm" >/dev/null 2>&1
if [ -f "$tmp/tm/report.json" ] && [ ! -e "$tmp/tm/stale.txt" ] && ! ls -d "$tmp/tm".tmp-* >/dev/null 2>&1; then ok
else bad "reduce --save over an existing folder: mixed or left behind"; ls "$tmp/tm" | head; fi

# A campaign's background triage (fuzz --triage) that runs out of memory
# leaves its reason in BUNDLE/triage.err, no partial BUNDLE/triage, and the
# campaign ends normally.
nerr=0
for n in 20 50 120; do
  rm -rf "$tmp/tf"
  out=$(TRENCH_HEAP_FAIL=$n timeout -k 2 120 "$trench" fuzz --target builtin:inject=emit-tail-mask-short \
    --corpus "$d/emit-tail-mask-short.hlo" --no-gen --count 3 --until-finding --triage --out "$tmp/tf" -q 2>&1)
  rc=$?
  if { [ $rc != 0 ] && [ $rc != 1 ]; } || printf '%s\n' "$out" | grep -Eq 'internal error|Sanitizer|runtime error'; then
    bad "fuzz --triage, TRENCH_HEAP_FAIL=$n: exit $rc"; printf '%s\n' "$out" | tail -4; continue
  fi
  for fb in "$tmp"/tf/findings/*/; do
    [ -d "$fb" ] || continue
    if [ -e "$fb/triage.err" ]; then
      grep -q 'out of memory' "$fb/triage.err" && nerr=$((nerr + 1))
      [ -e "$fb/triage" ] && bad "fuzz --triage, TRENCH_HEAP_FAIL=$n: a failed triage left $fb/triage"
    fi
  done
done
if [ $nerr -gt 0 ]; then ok; else bad "fuzz --triage: no injection ended a triage in an out-of-memory triage.err"; fi

if [ -x "$(dirname "$trench")/trench-verify" ]; then
  kd=$tests/kernels
  tsweep "verify (counterexample)" "1 2" 1 "" -- "$trench" verify --ref "$kd/rowmax.hlo" --kernel "$kd/rowmax_init0.c" --locations 7
  tsweep "verify (z3 equivalence)" "0 2" 0 "" -- "$trench" verify --ref "$kd/chain.hlo" --kernel "$kd/chain_factored.c" --locations 0
  tsweep "verify (CUDA race)" "1 2" 1 "" -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$kd/rowsum_racy.cu" --locations 3
fi

# Address-space limits (real exhaustion) cannot be combined with ASan,
# whose shadow memory needs terabytes of it: plain builds only. Each limit,
# from too small to enough, ends in a value or a clean error; some limits
# give an out-of-memory diagnostic. Before heap frames the packed panel of
# the dot (--max-memory 0: no budget to decline it first) aborted.
if ! ldd "$trench" 2>/dev/null | grep -q libasan; then
  cat > "$tmp/dot.hlo" <<'H'
HloModule bigdot
ENTRY main {
  a = f32[2,2000] parameter(0)
  b = f32[2000,2000] parameter(1)
  ROOT d = f32[2,2000] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
H
  cat > "$tmp/conv.hlo" <<'H'
HloModule bigconv
ENTRY main {
  a = f32[1,512,512,16] parameter(0)
  k = f32[1,1,16,16] parameter(1)
  ROOT c = f32[1,512,512,16] convolution(a, k), window={size=1x1}, dim_labels=b01f_01io->b01f
}
H
  for mc in "dot:run --max-memory 0" "dot:check --target interp --seeds 1 --max-memory 0" \
            "conv:run --shadow --max-memory 0" "conv:check --target interp --seeds 1 --max-memory 0"; do
    mod=${mc%%:*} cmd=${mc#*:} nom=0
    for v in 50000 70000 90000 120000; do
      out=$(timeout -k 2 60 bash -c "ulimit -v $v; '$trench' $cmd '$tmp/$mod.hlo'" 2>&1)
      rc=$?
      if [ $rc = 127 ] && printf '%s\n' "$out" | grep -q 'error while loading shared libraries'; then continue; fi
      if [ $rc -ge 124 ] || printf '%s\n' "$out" | grep -q 'internal error\|^check: finding'; then
        bad "$mod $cmd, ulimit -v $v: exit $rc"; printf '%s\n' "$out" | tail -3; continue
      fi
      printf '%s\n' "$out" | grep -q 'out of memory' && nom=$((nom + 1))
    done
    if [ $nom -gt 0 ]; then ok; else bad "$mod $cmd: no ulimit -v gave an out-of-memory verdict"; fi
  done
fi
finish
