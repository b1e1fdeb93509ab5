#!/usr/bin/env bash
# The IREE tier (make check-iree): installs IREE's compiler and runtime
# (scripts/venv-iree.sh: about 110 MB to download, 45-120 s the first time,
# well under a second after) and checks the iree-cpu target as trench uses it:
#   1. a few modules against the reference: f32 and f64 (kept f64, not
#      demoted), bf16 and tuples (flattened leaves), with denormals excused
#      by profiles/iree-cpu.conf and reported under --strict;
#   2. what IREE cannot lower is "unsupported" with IREE's own words;
#   3. the recorded IREE findings (tests/iree-findings, docs/FINDINGS.md)
#      still reproduce ("// expect:" lines as in tests/findings.sh);
#   4. a slice of the acceptance suite (tests/adapters/iree_suite.sh --slice).
# Ends with one line "N passed, N failed".
# Usage: tests/iree.sh TRENCH TESTS_DIR
set -u
trench=$1
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
. "$tests/lib.sh"
export TRENCH_HOME=$root
start=$(date +%s)
py=$(bash "$root/scripts/venv-iree.sh" | tail -n 1)
[ -x "$py" ] || { bad "cannot create the IREE virtualenv (scripts/venv-iree.sh)"; finish; exit 1; }
jpy=$root/.venv/bin/python
echo "iree: virtualenv ready in $(( $(date +%s) - start )) s"
suite=$tests/xla-suite

# 1. Modules that pass, with the version in the report.
expect 0 '"target_name":[[:space:]]*"iree-cpu"' -- "$trench" check "$suite/abs_f32.hlo" --target iree-cpu --json
expect 0 '"target_version":[[:space:]]*"iree-base-compiler 3\.13\.0 \(iree-compile 3\.' -- \
  "$trench" check "$suite/abs_f32.hlo" --target iree-cpu --json
expect 0 'check: (pass|weak)' -- "$trench" check "$suite/tuple_gte.hlo" "$suite/abs_bf16.hlo" \
  "$suite/multiply_f16.hlo" "$suite/dot_batch_f32.hlo" --target iree-cpu
# f64 stays f64: a/b with a tight f64 bound passes only when IREE does not
# demote to f32 (its default), and the seeds include denormal inputs.
"$jpy" -c 'import numpy as np, sys
np.save(sys.argv[1], np.array([1.0, 2.0, 1e-310, 3.0], np.float64) / 3)
np.save(sys.argv[2], np.array([3.0, 7.0, 1.0, 1e-300], np.float64))' "$tmp/a.npy" "$tmp/b.npy"
cat > "$tmp/div64.hlo" <<'EOF'
HloModule div64
ENTRY e {
  a = f64[4] parameter(0)
  b = f64[4] parameter(1)
  ROOT r = f64[4] divide(a, b)
}
EOF
expect 0 'excused 1 by denormal-flush' -- "$trench" check "$tmp/div64.hlo" --target iree-cpu \
  --input "$tmp/a.npy" --input "$tmp/b.npy"
expect 1 'mismatch.*denormal' -- "$trench" check "$tmp/div64.hlo" --target iree-cpu --strict \
  --input "$tmp/a.npy" --input "$tmp/b.npy"

# An out-of-range float-to-int convert (StableHLO: TBD) is excused on
# its own elements and on what is computed from them (convert-out-of-
# range), not on an in-range neighbour; --strict shows it.
"$jpy" -c 'import numpy as np, sys
np.save(sys.argv[1], np.array([-1.5, 300.0, 2.5, 7.0], np.float32))' "$tmp/cv.npy"
cat > "$tmp/cvt.hlo" <<'EOF'
HloModule cvt
ENTRY e {
  a = f32[4] parameter(0)
  c = s8[4] convert(a)
  u = u8[4] convert(a)
  k = u8[4] constant({1, 1, 1, 1})
  s = u8[4] add(u, k)
  ROOT t = (s8[4], u8[4]) tuple(c, s)
}
EOF
expect 0 'out1: pass .*excused 2 by convert-out-of-range' -- "$trench" check "$tmp/cvt.hlo" --target iree-cpu \
  --input "$tmp/cv.npy"
expect 1 'out1: mismatch' -- "$trench" check "$tmp/cvt.hlo" --target iree-cpu --strict --input "$tmp/cv.npy"

# 2. IREE's refusals are unsupported, with its words.
expect 0 "unsupported: IREE: failed to legalize operation 'math.absf'" -- \
  "$trench" check "$suite/abs_f8e5m2.hlo" --target iree-cpu --seeds 1
# XLA's converter keeps HLO ops StableHLO lacks as mhlo ops; the adapter
# rewrites those with an exact StableHLO-side form (copy, erf as chlo.erf,
# an integer top-k as chlo.top_k (I22 shows there), and a rank-0
# dynamic-slice, which StableHLO's printer writes as text no parser reads)
# and IREE refuses the rest (a float top-k: CHLO's compares with >, HLO's
# by TOTALORDER).
expect 0 "unsupported: IREE: Dialect .mhlo' not found for custom op 'mhlo.topk'" -- \
  "$trench" check "$suite/topk_f32.hlo" --target iree-cpu --seeds 1
cat > "$tmp/ds0.hlo" <<'EOF'
HloModule ds0
ENTRY e {
  p = f32[] parameter(0)
  q = f32[4] parameter(1)
  s = f32[] dynamic-slice(p), dynamic_slice_sizes={}
  d = f32[4] broadcast(s), dimensions={}
  ROOT r = f32[4] add(q, d)
}
EOF
expect 0 'check: 3 modules, 6 checks: 6 pass' -- "$trench" check "$suite/erf_f32.hlo" \
  "$suite/copy_f32.hlo" "$tmp/ds0.hlo" --target iree-cpu --seeds 2
expect 2 'no virtualenv at .*iree-0\.0\.1.*venv-iree\.sh --iree 0\.0\.1' -- \
  "$trench" check "$suite/abs_f32.hlo" --target iree-cpu@0.0.1

# 3. The recorded findings.
shopt -s nullglob
files=("$tests"/iree-findings/*.hlo)
[ ${#files[@]} -ge 1 ] || bad "no modules in $tests/iree-findings"
for f in "${files[@]}"; do
  name=$(basename "$f" .hlo)
  want=$(sed -n 's|^// expect: \([a-z_-]*\).*|\1|p' "$f" | head -n 1)
  inputs=()
  i=0
  while IFS= read -r expr; do
    "$jpy" -c "import numpy as np, sys; np.save(sys.argv[1], $expr)" "$tmp/$name.in$i.npy"
    inputs+=(--input "$tmp/$name.in$i.npy")
    i=$((i + 1))
  done < <(sed -n 's|^// expect-input: ||p' "$f")
  got=$("$trench" check "$f" --target iree-cpu "${inputs[@]}" --json 2>/dev/null | "$jpy" -c '
import json, sys
try: d = json.load(sys.stdin)
except ValueError: print("no-report"); sys.exit()
s = d.get("summary", "")
print(d.get("signature", {}).get("kind", "") if s == "finding" else s)')
  if [ -n "$want" ] && [ "$got" = "$want" ]; then ok
  else bad "$name: expected ${want:-an expect line}, got ${got:-nothing} (fixed? update it and docs/FINDINGS.md)"; fi
done

# 4. The acceptance slice.
out=$(bash "$tests/adapters/iree_suite.sh" --slice "$(dirname "$trench")")
printf '%s\n' "$out" | sed '$d'
if printf '%s\n' "$out" | tail -n 1 | grep -q ' 0 failed$'; then ok; else bad "iree_suite --slice"; fi
echo "iree: $(( $(date +%s) - start )) s in all"
finish
