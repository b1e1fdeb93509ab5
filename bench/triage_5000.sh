#!/bin/sh
# triage_5000.sh - isolates one planted fault in a generated module of N
# (default 5000) entry instructions and prints the target runs it took
# against the budget 2*log2(N)+20. The module is a DAG of exact s32 ops
# (add, subtract, xor over earlier values and 8 parameters), so the
# reference's bounds stay exact however deep it is; one instruction at a
# random position is a shift-left by 33, which the builtin target gets
# wrong with inject=emit-shift-amount-mod-width (the reference gives 0).
# The target compiles with libtcc (jit=tcc): a 5000-op kernel takes cc -O2
# many seconds per run. Usage: bench/triage_5000.sh [TRENCH] [N] [SEED]
set -u
T=${1:-build/trench}
N=${2:-5000}
SEED=${3:-1}
[ -x "$T" ] || { echo "no $T: run make" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v n="$N" -v seed="$SEED" 'BEGIN {
  srand(seed);
  print "HloModule gen" n; print "ENTRY e {";
  for (i = 0; i < 8; i++) printf "  p%d = s32[16] parameter(%d)\n", i, i;
  print "  c33 = s32[] constant(33)"; print "  k33 = s32[16] broadcast(c33), dimensions={}";
  m = n - 11; plant = int(m / 4 + rand() * m / 2);
  split("add subtract xor", ops, " ");
  print "  v0 = s32[16] add(p0, p1)";
  for (i = 1; i < m; i++) {
    if (i == plant) { printf "  v%d = s32[16] shift-left(v%d, k33)\n", i, i - 1; continue }
    o = ops[1 + int(rand() * 3)];
    if (rand() < 0.5) b = "p" int(rand() * 8); else b = "v" int(rand() * i);
    if (b == "v" (i - 1)) b = "p0";
    printf "  v%d = s32[16] %s(v%d, %s)\n", i, o, i - 1, b;
  }
  printf "  ROOT r = s32[16] add(v%d, p2)\n}\n", m - 1;
  print plant > "/dev/stderr";
}' > "$tmp/gen.hlo" 2> "$tmp/plant"
plant=$(cat "$tmp/plant")
count=$(awk '/ = /' "$tmp/gen.hlo" | wc -l)
s0=$(date +%s.%N)
"$T" isolate "$tmp/gen.hlo" --target builtin:inject=emit-shift-amount-mod-width,jit=tcc --seeds 1 --json > "$tmp/r.json"
s1=$(date +%s.%N)
python3 - "$tmp/r.json" "$count" "$plant" "$s0" "$s1" <<'PY'
import json, math, sys
r = json.load(open(sys.argv[1])); L = r["levels"]; n = int(sys.argv[2])
inst = L["instruction"]
runs_to_instr = L["outputs"]["target_runs"] + inst["target_runs"]
budget = 2 * math.log2(n) + 20
print("module: %d instructions, planted %%v%s" % (n, sys.argv[3]))
print("culprit: %%%s (%s); agree with the per-instruction check: %s" % (inst["culprit"], inst["op"], inst["agree"]))
print("target runs to the instruction (outputs + bisection + cross-checks): %d (bisection alone %d); "
      "budget 2*log2(N)+20 = %.1f: %s" % (runs_to_instr, inst["bisection_runs"], budget,
                                           "within" if runs_to_instr <= budget else "OVER"))
print("target runs, every level (passes, kernel, disabling, fuel too): %d; time %.1f s"
      % (r["target_runs"], float(sys.argv[5]) - float(sys.argv[4])))
ok = inst["culprit"] == "v" + sys.argv[3] and runs_to_instr <= budget
sys.exit(0 if ok else 1)
PY
