#!/usr/bin/env bash
# End-to-end tests of `trench verify` (docs/VERIFY.md) on the benchmark
# suite tests/kernels/: the suite is complete (enough kernels, C and CUDA,
# every bug kind, every reference used), each kernel gets the verdict its
# header expects (correct: no counterexample and no unknown; bug: a
# confirmed counterexample), bundles replay, usage errors are clear.
# The default tier runs a quick subset; TRENCH_VERIFY_ALL=1 runs every
# kernel (bench/verify_bench.sh also times them against random testing).
# Usage: tests/cli_verify.sh TRENCH TESTS_DIR. Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
kd=$tests/kernels
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

# ---- completeness of the suite ----
if [ -d "$kd" ]; then ok; else bad "tests/kernels is missing"; fi
kernels=$(ls "$kd"/*.c "$kd"/*.cu "$kd"/*.py 2>/dev/null)
n=$(printf '%s\n' "$kernels" | grep -c . )
[ "$n" -ge 40 ] && ok || bad "only $n kernels in tests/kernels (want >= 40)"
nc=$(printf '%s\n' "$kernels" | grep -c '\.c$')
ncu=$(printf '%s\n' "$kernels" | grep -c '\.cu$')
[ "$nc" -ge 10 ] && [ "$ncu" -ge 10 ] && ok || bad "want >= 10 C and >= 10 CUDA kernels ($nc, $ncu)"
# KernelBench-style sources: a load_inline CUDA string and its host wrapper
npy=$(printf '%s\n' "$kernels" | grep -c '\.py$')
[ "$npy" -ge 3 ] && ok || bad "want >= 3 KernelBench-style .py kernels ($npy)"
kinds=""
ncorrect=0
for k in $kernels; do
  head=$(grep -m1 'trench-kernel:' "$k")
  ref=$(printf '%s' "$head" | sed -n 's/.*ref=\([^ ]*\).*/\1/p')
  exp=$(printf '%s' "$head" | sed -n 's/.*expect=\([^ ]*\).*/\1/p')
  if [ -z "$ref" ] || [ -z "$exp" ]; then bad "$(basename "$k"): no 'trench-kernel: ref=... expect=...' header"; continue; fi
  [ -f "$kd/$ref" ] && ok || bad "$(basename "$k"): reference $ref is missing"
  case $exp in
    correct|correct:*) ncorrect=$((ncorrect + 1)) ;;
    bug:*) kinds="$kinds ${exp#bug:}" ;;
    *) bad "$(basename "$k"): expect=$exp is neither correct[:note] nor bug:KIND" ;;
  esac
  case $k in *.cu) grep -q 'trench-launch: grid=[0-9,]* block=[0-9,]*' "$k" && ok || bad "$(basename "$k"): no trench-launch line" ;; esac
  case $k in *.py) grep -q 'load_inline(' "$k" && grep -q 'cuda_sources=' "$k" && ok || bad "$(basename "$k"): no load_inline(cuda_sources=...) call" ;; esac
done
nkinds=$(printf '%s\n' $kinds | sort -u | grep -c .)
[ "$nkinds" -ge 10 ] && ok || bad "only $nkinds bug kinds (want >= 10): $(printf '%s\n' $kinds | sort -u | tr '\n' ' ')"
[ "$ncorrect" -ge 15 ] && ok || bad "only $ncorrect correct kernels"
for need in init-value tail-guard off-by-one-tile wrong-stride race missing-barrier stale-read index-overflow shape-shortcut; do
  printf '%s\n' $kinds | grep -qx "$need" && ok || bad "no kernel of bug kind $need"
done
grep -l 'expect=correct:reordered' $kernels >/dev/null && ok || bad "no reordered-but-correct kernel"
for h in "$kd"/*.hlo; do
  b=$(basename "$h")
  grep -l "ref=$b" $kernels >/dev/null && ok || bad "reference $b is used by no kernel"
  "$trench" parse -q "$h" && ok || bad "$b does not parse"
done

# ---- verdicts ----
check_kernel() {
  local k=$1 head ref exp out rc
  head=$(grep -m1 'trench-kernel:' "$k")
  ref=$(printf '%s' "$head" | sed -n 's/.*ref=\([^ ]*\).*/\1/p')
  exp=$(printf '%s' "$head" | sed -n 's/.*expect=\([^ ]*\).*/\1/p')
  local first=--first
  case $exp in correct*) first= ;; esac
  out=$("$trench" verify --ref "$kd/$ref" --kernel "$k" $first 2>&1)
  rc=$?
  case $exp in
    correct*)
      if [ $rc = 0 ] && printf '%s\n' "$out" | grep -Eq '^summary: [0-9]+ locations: [1-9][0-9]* equivalent over the reals, 0 counterexamples, 0 unknown; 0 kernel-wide findings'; then ok
      else bad "$(basename "$k") ($exp): exit $rc"; printf '%s\n' "$out" | tail -3; fi ;;
    *)
      if [ $rc = 1 ] && printf '%s\n' "$out" | grep -Eq '^summary: .* ([1-9][0-9]* counterexamples|[1-9][0-9]* kernel-wide findings)'; then ok
      else bad "$(basename "$k") ($exp): not caught (exit $rc)"; printf '%s\n' "$out" | tail -3; fi ;;
  esac
}
if [ "${TRENCH_VERIFY_ALL:-0}" = 1 ]; then
  for k in $kernels; do check_kernel "$k"; done
else
  # one kernel per bug kind and a few correct ones, C and CUDA
  for k in matmul_ok.c matmul_reversed.c rowmax_branch.c softmax_ok.c conv_ok.c rowmax_init0.c \
           matmul_tail.c matmul_stale.c bigscale_short.c softmax_noshift.c chain_vec8.c gather_stride.c \
           rowsum_smem_ok.cu rowsum_shfl_ok.cu matmul_tiled_ok.cu rowsum_racy.cu rowsum_smem_nobarrier.cu \
           chain_noguard.cu matmul_tiled_offbyone.cu; do
    check_kernel "$kd/$k"
  done
fi

# ---- output details ----
expect 1 'kernel: counterexample: out-of-bounds read: buffer 0 \(in0\)' -- "$trench" verify --ref "$kd/chain.hlo" --kernel "$kd/chain_noguard.cu"
expect 1 'confirmed: with the threads scheduled in lockstep' -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$kd/rowsum_racy.cu"
expect 1 'out0\[7\]: counterexample: value: kernel gives' -- "$trench" verify --ref "$kd/rowmax.hlo" --kernel "$kd/rowmax_init0.c" --locations 7
expect 0 'summary: 1 locations: 1 equivalent' -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$kd/matmul_ok.c" --locations '7,7'
expect 0 'slicing: 1 of 8 blocks' -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$kd/rowsum_smem_ok.cu" --locations 3 -v
expect 0 'paths: 8' -- "$trench" verify --ref "$kd/rowmax.hlo" --kernel "$kd/rowmax_branch.c" --locations 0 -v
expect 0 'equal on the 4 paths explored; more than 4 paths' -- "$trench" verify --ref "$kd/rowmax.hlo" --kernel "$kd/rowmax_branch.c" --locations 0 --max-paths 4
# a bundle replays with trench run
expect 1 'saved in' -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$kd/matmul_stale.c" --locations '0,0' --save "$tmp/b"
for f in module.hlo in0.npy in1.npy kernel_out0.npy kernel.c README; do
  [ -f "$tmp/b/$f" ] && ok || bad "bundle lacks $f"
done
expect 0 'out0: f32\[8,8\]' -- "$trench" run "$tmp/b/module.hlo" --input "$tmp/b/in0.npy" --input "$tmp/b/in1.npy"
# random differential testing, for comparison
expect 1 'random: [1-9][0-9]* of 5 seeds fail' -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$kd/matmul_tail.c" --random 5
# (normal inputs alone never give a row of negative values; the default
# plan's domain-edge seeds, every third, do: docs/INPUTS.md)
expect 1 'random: [1-9][0-9]* of 20 seeds fail' -- "$trench" verify --ref "$kd/rowmax.hlo" --kernel "$kd/rowmax_init0.c" --random 20

# ---- the built-in compiler's C against its module ----
# Every registered defect (TRENCH_VERIFY_ALL=1; the default tier: one per
# element domain and reference feature: f32, integers as bitvectors, bf16
# through the format conversions, a while loop) is caught on the C of its
# trigger module, and the same module compiled clean is equivalent.
root=$(cd "$tests/.." && pwd)
defects="emit-tail-mask-short fusion-reduce-init-once emit-unsigned-compare-signed constfold-bf16-truncate while-trip-count-le"
if [ "${TRENCH_VERIFY_ALL:-0}" = 1 ]; then
  defects=$("$trench" defects | awk 'NR > 1 {print $1}')
  [ "$(printf '%s\n' $defects | wc -l)" -ge 25 ] && ok || bad "trench defects lists fewer than 25 defects"
fi
for n in $defects; do
  [ -f "$root/tests/defects/$n.hlo" ] && ok || bad "defect $n has no trigger module in tests/defects"
  "$trench" compile "$root/tests/defects/$n.hlo" -o "$tmp/$n.clean.c" >/dev/null 2>&1 && ok || bad "compile $n"
  "$trench" compile "$root/tests/defects/$n.hlo" --inject "$n" -o "$tmp/$n.bad.c" >/dev/null 2>&1 && ok || bad "compile --inject $n"
  expect 0 '0 counterexamples, 0 unknown' -- "$trench" verify --ref "$root/tests/defects/$n.hlo" --kernel "$tmp/$n.clean.c" --emitted
  expect 1 'counterexample: value' -- "$trench" verify --ref "$root/tests/defects/$n.hlo" --kernel "$tmp/$n.bad.c" --emitted --first
done

# size macros
printf 'void kernel(const float *a, float *out) {\n  for (int i = 0; i < ROWS; i++) { float s = 0; for (int j = 0; j < COLS; j++) s += a[i * COLS + j]; out[i] = s; }\n}\n' > "$tmp/macro.c"
expect 0 '8 equivalent over the reals, 0 counterexamples' -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$tmp/macro.c" --shapes ROWS=8,COLS=32
expect 1 '[1-9][0-9]* counterexamples' -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$tmp/macro.c" --shapes ROWS=8,COLS=31 --first
expect 2 'expected NAME=VALUE' -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$tmp/macro.c" --shapes ROWS

# ---- usage and bad input ----
expect 2 'ref REF.hlo is required' -- "$trench" verify --kernel "$kd/matmul_ok.c"
expect 2 'expected a .c, .cu or .py file' -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$kd/matmul.hlo"
printf 'import torch\nx = 1\n' > "$tmp/noinline.py"
expect 1 'no load_inline' -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$tmp/noinline.py"
# a .py's recorded launch: announced, and its bundle replays as a .cu
expect 1 'launch: rowsum_kernel<<<.8,1,1., .8,1,1.>>> recorded from the host wrapper; outputs start arbitrary' -- \
  "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$kd/rowsum_kb_stale.py" --first --save "$tmp/kb"
expect 1 '1 counterexamples' -- "$trench" verify --ref "$tmp/kb/module.hlo" --kernel "$tmp/kb/kernel.cu" --first
expect 0 'outputs start zeroed' -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$kd/rowsum_kb_ok.py" --locations 0
expect 2 'cannot read' -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$tmp/none.c"
expect 2 'expected X\[,Y\[,Z\]\]' -- "$trench" verify --ref "$kd/rowsum.hlo" --kernel "$kd/rowsum_smem_ok.cu" --grid 0
expect 2 'expected 2 indices' -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$kd/matmul_ok.c" --locations '9,0'
expect 1 'kernel takes 2 pointer parameters; the reference needs 3' -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$kd/rowsum_ok.c"
printf 'void kernel(const float *a, const float *b, float *o) { o[0] = a[0] +; }\n' > "$tmp/broken.c"
expect 1 'broken.c:1:[0-9]+: error: expected expression' -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$tmp/broken.c"
printf 'float helper(float);\nvoid kernel(const float *a, const float *b, float *o) { o[0] = helper(a[0]); }\n' > "$tmp/call.c"
expect 1 "call of 'helper': not modelled" -- "$trench" verify --ref "$kd/matmul.hlo" --kernel "$tmp/call.c"
expect 0 'Usage: trench verify' -- "$trench" verify --help
finish
