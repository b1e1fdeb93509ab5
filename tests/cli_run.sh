#!/usr/bin/env bash
# cli_run.sh - end-to-end tests of "trench run": drawn inputs are the same
# for the same seed, a run repeats from the inputs it wrote, bad inputs
# exit 2, modules the reference cannot evaluate exit 1, and the summary
# lines. Prints a line per failed check and ends with "N passed, N failed".
# Usage: bash tests/cli_run.sh BUILD/trench TESTS_DIR
set -u
trench=${1:?usage: cli_run.sh TRENCH TESTS_DIR}
tests=${2:-tests}
examples=$(cd "$tests/.." && pwd)/examples
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$trench" ]; then
  echo "FAIL: $trench is not an executable"
  echo "0 passed, 1 failed"
  exit 1
fi
trench=$(cd "$(dirname "$trench")" && pwd)/$(basename "$trench")

ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
note=""
check() {
  local name=$1; shift
  note=""
  if "$@"; then ok; else no "$name${note:+ ($note)}"; fi
}
# t ARGS...: runs trench; stdout in $tmp/out, stderr in $tmp/err, status in $rc.
t() { "$trench" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
not() { ! "$@"; }
rc_is() { [ "$rc" = "$1" ] || { note="exit $rc, expected $1: $(head -c 300 "$tmp/err")"; false; }; }
out_has() { grep -qE -- "$1" "$tmp/out" || { note="stdout: $(head -c 300 "$tmp/out")"; false; }; }
err_has() { grep -qE -- "$1" "$tmp/err" || { note="stderr: $(head -c 300 "$tmp/err")"; false; }; }
same() { cmp -s "$1" "$2" || { note="$1 and $2 differ"; false; }; }

mlp=$examples/mlp.hlo

# ---- help ----
t run --help
check "run --help exits 0" rc_is 0
check "run --help documents --seed" out_has '--seed N'
check "run --help documents the exit codes" out_has '^  2  usage error'
t --help
check "trench --help lists run" out_has '^  run '

# ---- drawn inputs: same seed, same bytes ----
t run "$mlp" --seed 1 --out "$tmp/a"
check "run mlp exits 0" rc_is 0
cp "$tmp/out" "$tmp/a.txt"
check "run mlp summarises out0" out_has '^out0: f32\[8,10\] min=[-0-9.e]+ max=[-0-9.e]+ mean=[-0-9.e]+ nan=0 inf=0$'
check "run mlp names the drawn inputs" out_has '^in0: f32\[8,16\] normal seed=1$'
check "run mlp writes four inputs" test -f "$tmp/a/in3.npy"
check "run mlp writes no fifth input" not test -e "$tmp/a/in4.npy"
check "run mlp writes out0" test -f "$tmp/a/out0.npy"
t run "$mlp" --seed 1 --out "$tmp/b"
check "second run exits 0" rc_is 0
for f in in0 in1 in2 in3 out0; do
  check "seed 1 twice: identical $f.npy" same "$tmp/a/$f.npy" "$tmp/b/$f.npy"
done
check "seed 1 twice: identical summary" same "$tmp/a.txt" "$tmp/out"
t run "$mlp" --seed 2 --out "$tmp/c"
check "seed 2 draws other inputs" not cmp -s "$tmp/a/in0.npy" "$tmp/c/in0.npy"
t run "$mlp" --out "$tmp/d"
t run "$mlp" --seed 0 --out "$tmp/e"
check "the default seed is 0" same "$tmp/d/in0.npy" "$tmp/e/in0.npy"
t run "$mlp" --seed 0x10 --out "$tmp/f"
t run "$mlp" --seed 16 --out "$tmp/g"
check "--seed takes hex" same "$tmp/f/in0.npy" "$tmp/g/in0.npy"

# ---- a run repeats from the inputs it wrote ----
t run "$mlp" --input "$tmp/a/in0.npy" --input "$tmp/a/in1.npy" \
  --input "$tmp/a/in2.npy" --input="$tmp/a/in3.npy" --out "$tmp/r"
check "run with --input exits 0" rc_is 0
check "run with --input names the files" out_has "^in0: f32\[8,16\] from .*/a/in0.npy$"
check "--input outputs equal the drawn run's" same "$tmp/a/out0.npy" "$tmp/r/out0.npy"
check "--input inputs are written back unchanged" same "$tmp/a/in2.npy" "$tmp/r/in2.npy"
check "--input summary line equal" test "$(grep '^out0' "$tmp/out")" = "$(grep '^out0' "$tmp/a.txt")"

# ---- bad inputs exit 2 ----
t run "$mlp" --input "$tmp/a/in1.npy" --input "$tmp/a/in1.npy" \
  --input "$tmp/a/in2.npy" --input "$tmp/a/in3.npy"
check "wrong shape exits 2" rc_is 2
check "wrong shape names the file and both shapes" \
  err_has 'in1.npy: input 0 \(parameter 0, %Arg_0.1\) must be f32\[8,16\], the file holds f32\[16,32\]'
check "wrong shape prints no outputs" not grep -q '^out0' "$tmp/out"
t run "$mlp" --input "$tmp/a/in0.npy"
check "too few inputs exits 2" rc_is 2
check "too few inputs says how many" err_has 'takes 4 inputs .*1 --input given'
t run "$mlp" --input "$tmp/a/in0.npy" --input "$tmp/a/in1.npy" \
  --input "$tmp/a/in2.npy" --input "$tmp/nope.npy"
check "missing input file exits 2" rc_is 2
check "missing input file is named" err_has 'nope.npy'
cat >"$tmp/ints.hlo" <<'EOF'
HloModule ints
ENTRY e {
  p = s32[8,16] parameter(0)
  ROOT n = s32[8,16] negate(p)
}
EOF
t run "$tmp/ints.hlo" --out "$tmp/i"
check "s32 module runs" rc_is 0
t run "$mlp" --input "$tmp/i/in0.npy" --input "$tmp/a/in1.npy" \
  --input "$tmp/a/in2.npy" --input "$tmp/a/in3.npy"
check "wrong dtype exits 2" rc_is 2
check "wrong dtype names the file" err_has 'in0.npy: .*(f32|<f4|int32|<i4)'
printf 'not a numpy file' >"$tmp/junk.npy"
t run "$tmp/ints.hlo" --input "$tmp/junk.npy"
check "malformed .npy exits 2" rc_is 2

# ---- usage errors ----
t run
check "no module exits 2" rc_is 2
t run "$mlp" --dist gaussian
check "unknown --dist exits 2" rc_is 2
check "unknown --dist is named" err_has "unknown distribution 'gaussian'"
t run "$mlp" --seed -1
check "negative --seed exits 2" rc_is 2
t run "$mlp" --seed 12x
check "bad --seed exits 2" rc_is 2
t run "$mlp" --specials 1.5
check "--specials above 1 exits 2" rc_is 2
t run "$mlp" --shadow
check "--shadow evaluates" rc_is 0
check "--shadow prints bounds" out_has '^out0: shadow max_bound=[0-9.e+-]+ uncertain=[0-9]+/[0-9]+$'
t run "$tmp/missing.hlo"
check "unreadable module exits 2" rc_is 2
printf 'x' >"$tmp/afile"
t run "$mlp" --out "$tmp/afile"
check "--out on a file exits 2" rc_is 2
check "--out on a file says so" err_has 'cannot create directory'

# ---- modules the reference cannot evaluate exit 1 ----
cat >"$tmp/cc.hlo" <<'EOF'
HloModule cc
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(p), custom_call_target="my_kernel"
}
EOF
t run "$tmp/cc.hlo" --out "$tmp/cc"
check "unsupported op exits 1" rc_is 1
check "unsupported op is located" err_has 'cc.hlo:4:[0-9]+: error: .*unsupported: custom-call'
check "inputs are written even when evaluation fails" test -f "$tmp/cc/in0.npy"
check "no output when evaluation fails" not test -e "$tmp/cc/out0.npy"
cat >"$tmp/syntax.hlo" <<'EOF'
HloModule s
ENTRY e {
  p = f32[4] parameter(0
}
EOF
t run "$tmp/syntax.hlo"
check "syntax error exits 1" rc_is 1
cat >"$tmp/elided.hlo" <<'EOF'
HloModule el
ENTRY e {
  p = f32[3] parameter(0)
  c = f32[3] constant({...})
  ROOT a = f32[3] add(p, c)
}
EOF
t run "$tmp/elided.hlo"
check "elided constant exits 1" rc_is 1
check "elided constant is reported" err_has 'elided'
check "elided constant hints at --fill-elided" err_has '^hint: --fill-elided'
t run "$tmp/elided.hlo" --fill-elided
check "--fill-elided evaluates it" rc_is 0
check "--fill-elided prints the output" out_has '^out0: f32\[3\] '

# ---- summaries ----
cat >"$tmp/consts.hlo" <<'EOF'
HloModule consts
ENTRY e {
  a = f32[3] constant({1, 2, 3})
  b = s32[3] constant({-1, 5, 2})
  c = f32[4] constant({nan, inf, 1, -2})
  d = pred[4] constant({1, 0, 1, 1})
  e = u8[0] constant({})
  ROOT t = (f32[3], (s32[3], f32[4]), pred[4], u8[0]) tuple(a, (s32[3], f32[4]) tuple(b, c), d, e)
}
EOF
t run "$tmp/consts.hlo"
check "constant module exits 0" rc_is 0
check "float summary" out_has '^out0: f32\[3\] min=1 max=3 mean=2 nan=0 inf=0$'
check "int summary, tuple flattened depth-first" out_has '^out1: s32\[3\] min=-1 max=5 mean=2$'
check "NaN and Inf counted, min/max/mean without NaN" out_has '^out2: f32\[4\] min=-2 max=inf mean=inf nan=1 inf=1$'
check "pred summary" out_has '^out3: pred\[4\] min=0 max=1 mean=0.75$'
check "empty output" out_has '^out4: u8\[0\] empty$'
check "no inputs, no in lines" not out_has '^in0'

# ---- the default policy: indices in bounds ----
cat >"$tmp/ds.hlo" <<'EOF'
HloModule ds
ENTRY e {
  a = f32[10,4] parameter(0)
  i = s32[] parameter(1)
  z = s32[] constant(0)
  ROOT s = f32[3,4] dynamic-slice(a, i, z), dynamic_slice_sizes={3,4}
}
EOF
t run "$tmp/ds.hlo" --seed 5
check "dynamic-slice module exits 0" rc_is 0
check "start index gets an index distribution" out_has '^in1: s32\[\] index bound=7 seed=5$'
t run "$tmp/ds.hlo" --seed 5 --dist index-oob --out "$tmp/oob"
check "--dist index-oob exits 0 (starts clamp)" rc_is 0
check "--dist index-oob reaches the index" out_has '^in1: s32\[\] index-oob bound=7 seed=5$'
check "--dist index-oob leaves data normal" out_has '^in0: f32\[10,4\] normal seed=5$'
t run "$tmp/ds.hlo" --seed 5 --dist large --specials 0.5
check "--dist large reaches the data" out_has '^in0: f32\[10,4\] large specials=0.5 seed=5$'
check "--dist large leaves the index alone" out_has '^in1: s32\[\] index bound=7 seed=5$'
check "--specials puts NaN or Inf in the output" out_has '^out0: .* (nan=[1-9]|inf=[1-9])'

# ---- limits: a loop whose counter never grows gets a verdict ----
cp "$tests/limits/endless.hlo" "$tmp/endless.hlo"
t0=$(date +%s)
t run "$tmp/endless.hlo" --ref-timeout 1 --max-trips 1000000000
t1=$(date +%s)
check "endless loop: --ref-timeout ends the run with exit 1" rc_is 1
check "endless loop: the deadline is reported, located" err_has 'endless.hlo:[0-9]+:[0-9]+: error: in %[a-z0-9]+: reference deadline of 1 s passed'
check "endless loop: the deadline is kept (under 10 s)" test $((t1 - t0)) -lt 10
t run "$tmp/endless.hlo" --shadow --ref-timeout 1 --max-trips 1000000000
check "endless loop --shadow: exit 1" rc_is 1
check "endless loop --shadow: deadline reported" err_has 'reference deadline of 1 s passed'
t run "$tmp/endless.hlo" --max-trips 500
check "endless loop: --max-trips ends the run with exit 1" rc_is 1
check "endless loop: the trip limit is reported at the while" err_has 'endless.hlo:22:3: error: in %w: unsupported: while loop ran past the limit of 500 trips'
t run "$tmp/endless.hlo" --shadow --max-trips 500
check "endless loop --shadow: the trip limit is reported" err_has 'in %w: unsupported: while loop ran past the limit of 500 trips'
t compile --run --emit none "$tmp/endless.hlo" --max-trips 500
check "compile --run: the reference's trip limit ends it" err_has 'in %w: unsupported: while loop ran past the limit of 500 trips'
t compile --run --emit none "$tmp/endless.hlo" --ref-timeout 1
check "compile --run: the reference deadline ends it" err_has 'reference deadline of 1 s passed'
t run "$tmp/endless.hlo" --ref-timeout 0
check "--ref-timeout 0 is a usage error" rc_is 2
t run "$tmp/endless.hlo" --max-trips x
check "--max-trips x is a usage error" rc_is 2

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
