#!/usr/bin/env bash
# The mutators and the fuzz campaign (issue 12): every registered mutator
# applies to some corpus module and its output verifies; many random
# mutations of every corpus module verify; the external mutator example
# runs; junk or dying external mutators and unparsable corpus files are
# reported and skipped; campaigns are deterministic; shards merge to the
# one-process campaign; SIGKILL then --resume loses no finding.
# Usage: tests/cli_fuzz.sh TRENCH TESTS_DIR. Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
corpus=("$root"/examples/*.hlo "$tests"/hlo/*.hlo)
[ ${#corpus[@]} -ge 10 ] || bad "the corpus is missing (${#corpus[@]} files)"
target=builtin:jit=tcc

# The registry: at least 15 mutators; each applies to some corpus module
# and what it prints parses and verifies.
mapfile -t muts < <("$trench" mutate --list | awk '{ print $1 }')
[ ${#muts[@]} -ge 15 ] && ok || bad "only ${#muts[@]} mutators"
for mu in "${muts[@]}"; do
  applied=0
  for f in "${corpus[@]}"; do
    for s in 1 2; do
      if "$trench" mutate "$f" --seed $s --mutator "$mu" -o "$tmp/m.hlo" 2> /dev/null; then
        if "$trench" parse -q "$tmp/m.hlo"; then applied=1; else bad "$mu on $f seed $s does not verify"; fi
        break 2
      fi
    done
  done
  [ $applied = 1 ] && ok || bad "mutator $mu applies to no corpus module"
done
# Many mutations (3 stacked, drawn mutators) of every corpus module verify;
# a mutator that cannot apply says so and prints nothing.
nbad=0
for f in "${corpus[@]}"; do
  for s in 11 12; do
    if "$trench" mutate "$f" --seed $s --steps 3 -o "$tmp/m.hlo" 2> /dev/null; then
      "$trench" parse -q "$tmp/m.hlo" || { nbad=$((nbad + 1)); echo "invalid: $f seed $s"; }
    fi
  done
done
[ $nbad = 0 ] && ok || bad "$nbad mutated modules do not verify"
out=$("$trench" mutate "$root/examples/mlp.hlo" --seed 1 --mutator scatter-dup 2>&1 >/dev/null; "$trench" mutate "$tests/hlo/$(ls "$tests/hlo" | head -1)" --seed 1 --mutator compare 2>&1 > "$tmp/none.hlo")
rc=$?
if [ $rc = 1 ] && [ ! -s "$tmp/none.hlo" ] && printf '%s' "$out" | grep -q "does not apply"; then ok
else bad "a mutator that cannot apply must say so (exit $rc): $out"; fi
# Same seed, same text.
a=$("$trench" mutate "$root/examples/convnet.hlo" --seed 7 --steps 3 2>/dev/null | md5sum)
b=$("$trench" mutate "$root/examples/convnet.hlo" --seed 7 --steps 3 2>/dev/null | md5sum)
[ "$a" = "$b" ] && ok || bad "mutate is not deterministic"

# key LOG: one line per test: global index, outcome, signature, lineage.
key() { sed -E 's/.*"i":([0-9]+),"lineage":(\[[^]]*\]).*"outcome":"([a-z]+)".*/\1 \3 \2/' "$1" | sort -n; }
sigs() { sed -nE 's/.*"sig":"([^"]*)".*/\1/p' "$1" | sort -u; }
# Deterministic campaigns; a closing table; exit 0 without findings.
"$trench" fuzz --target $target --count 10 --seed 5 --out "$tmp/d1" --corpus "$root/examples" --corpus "$tests/hlo" -q > "$tmp/d1.txt" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "^  tests  *10" "$tmp/d1.txt" && ok || { bad "campaign (exit $rc)"; cat "$tmp/d1.txt"; }
"$trench" fuzz --target $target --count 10 --seed 5 --jobs 2 --out "$tmp/d2" --corpus "$root/examples" --corpus "$tests/hlo" -q > /dev/null 2>&1
[ "$(key "$tmp/d1/log.jsonl")" = "$(key "$tmp/d2/log.jsonl")" ] && ok || bad "the same seed gave other tests with --jobs 2"
[ "$(wc -l < "$tmp/d1/log.jsonl")" = 10 ] && ok || bad "log lines"
# An existing campaign folder is refused without --resume.
"$trench" fuzz --target $target --count 2 --seed 5 --out "$tmp/d1" --corpus "$root/examples" -q > /dev/null 2>&1
[ $? = 2 ] && ok || bad "an existing campaign folder must need --resume"

# Shards: 4 shards of 3 tests merge to the one-process campaign of 12.
"$trench" fuzz --target builtin:jit=tcc,inject=emit-tail-mask-short --count 12 --seed 9 --out "$tmp/one" --corpus "$root/examples" --corpus "$tests/hlo" -q > /dev/null 2>&1
for k in 0 1 2 3; do
  "$trench" fuzz --target builtin:jit=tcc,inject=emit-tail-mask-short --count 3 --seed 9 --shard $k/4 --out "$tmp/s$k" --corpus "$root/examples" --corpus "$tests/hlo" -q > /dev/null 2>&1
done
"$trench" merge --out "$tmp/merged" "$tmp"/s0 "$tmp"/s1 "$tmp"/s2 "$tmp"/s3 > "$tmp/merge.txt" 2>&1
[ "$(key "$tmp/one/log.jsonl")" = "$(key "$tmp/merged/log.jsonl")" ] && ok || bad "merged shards differ from one campaign"
[ "$(sigs "$tmp/one/log.jsonl")" = "$(ls "$tmp/merged/findings")" ] && [ -n "$(sigs "$tmp/one/log.jsonl")" ] && ok \
  || bad "merged findings: $(ls "$tmp/merged/findings" | tr '\n' ' ') vs $(sigs "$tmp/one/log.jsonl" | tr '\n' ' ')"
# A bundle: module, inputs, verdicts, target name and version, lineage.
b=$(ls -d "$tmp"/one/findings/* | head -1)
if [ -f "$b/module.hlo" ] && [ -f "$b/in0.npy" ] && [ -f "$b/COMPLETE" ] && grep -q mismatch "$b/verdict.txt" \
   && grep -q '"target_version"' "$b/fuzz.json" && grep -q '"lineage"' "$b/fuzz.json"; then ok
else bad "bundle $b incomplete"; ls "$b"; fi
ins=()
i=0; while [ -f "$b/in$i.npy" ]; do ins+=(--input "$b/in$i.npy"); i=$((i + 1)); done
"$trench" check "$b/module.hlo" --target builtin:jit=tcc,inject=emit-tail-mask-short "${ins[@]}" > /dev/null 2>&1
[ $? = 1 ] && ok || bad "the bundle does not reproduce"

# SIGKILL, then --resume: the same tests and findings as a run in one go.
"$trench" fuzz --target builtin:jit=tcc,inject=emit-tail-mask-short --count 24 --seed 9 --out "$tmp/k" --corpus "$root/examples" --corpus "$tests/hlo" -q > /dev/null 2>&1 &
pid=$!
sleep 1
kill -9 $pid
{ wait $pid; } 2> /dev/null
pkill -9 -g "$(ps -o pgid= $pid 2>/dev/null | tr -d ' ')" 2>/dev/null
sleep 0.2
"$trench" fuzz --target builtin:jit=tcc,inject=emit-tail-mask-short --count 24 --seed 9 --out "$tmp/k" --corpus "$root/examples" --corpus "$tests/hlo" --resume -q > /dev/null 2>&1
"$trench" fuzz --target builtin:jit=tcc,inject=emit-tail-mask-short --count 24 --seed 9 --out "$tmp/k1" --corpus "$root/examples" --corpus "$tests/hlo" -q > /dev/null 2>&1
[ "$(key "$tmp/k/log.jsonl")" = "$(key "$tmp/k1/log.jsonl")" ] && ok || bad "killed + resumed campaign differs"
[ "$(ls "$tmp/k/findings")" = "$(ls "$tmp/k1/findings")" ] && [ -n "$(ls "$tmp/k1/findings")" ] && ok || bad "resume lost findings"
[ ! -d "$tmp/k/work" ] && ok || bad "work folder left"

# External mutators: the example runs; junk and dying ones are dropped.
"$trench" fuzz --target $target --count 8 --seed 3 --out "$tmp/x" --corpus "$root/examples" --no-gen -q \
  --mutator-cmd "python3 $root/examples/fuzz/swap_binary.py" > /dev/null 2>&1
grep -q '"mutator-cmd:' "$tmp/x/log.jsonl" && ok || bad "the external mutator never ran"
"$trench" fuzz --target $target --count 8 --seed 3 --out "$tmp/j" --corpus "$root/examples" --no-gen -q \
  --mutator-cmd "echo junk" > "$tmp/j.txt" 2>&1
rc=$?
[ $rc = 0 ] && grep -q '"outcome":"dropped","why":"invalid module' "$tmp/j/log.jsonl" && ok || bad "junk mutator (exit $rc)"
"$trench" fuzz --target $target --count 8 --seed 3 --out "$tmp/e" --corpus "$root/examples" --no-gen -q \
  --mutator-cmd "exit 3" > /dev/null 2>&1
rc=$?
[ $rc = 0 ] && grep -q '"why":"exited with 3"' "$tmp/e/log.jsonl" && ok || bad "dying mutator (exit $rc)"
# A corpus file that does not parse is reported and skipped.
mkdir -p "$tmp/c"
cp "$root/examples/mlp.hlo" "$tmp/c/"
printf 'HloModule broken\nENTRY e {\n' > "$tmp/c/broken.hlo"
"$trench" fuzz --target $target --count 4 --out "$tmp/cb" --corpus "$tmp/c" -q > "$tmp/cb.txt" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "corpus file skipped" "$tmp/cb.txt" && grep -q "corpus-skipped  *1" "$tmp/cb.txt" && ok \
  || { bad "bad corpus file (exit $rc)"; cat "$tmp/cb.txt"; }
# An empty corpus folder is an error, not an empty campaign.
mkdir -p "$tmp/empty"
"$trench" fuzz --target $target --count 4 --out "$tmp/ce" --corpus "$tmp/empty" --no-gen -q > /dev/null 2>&1
[ $? = 2 ] && ok || bad "an empty corpus and no generator must be an error"
# A target that does not start ends the campaign with exit 2, no test run.
"$trench" fuzz --target cmd:/nonexistent/adapter --count 4 --out "$tmp/nt" -q > /dev/null 2> "$tmp/nt.err"
rc=$?
[ $rc = 2 ] && grep -q "does not start" "$tmp/nt.err" && ok || bad "a target that does not start (exit $rc)"
# A worker that dies before taking its first test (here: xla-cpu from a
# copy of trench with no virtualenv beside it) is read, reaped and
# reported: exit 2 with the target's reason, not a campaign that spins.
mkdir -p "$tmp/lone/build"
cp "$trench" "$tmp/lone/build/trench"
timeout 120 "$tmp/lone/build/trench" fuzz --target xla-cpu --count 4 --out "$tmp/lo" -q > /dev/null 2> "$tmp/lo.err"
rc=$?
[ $rc = 2 ] && grep -q "does not start.*virtualenv" "$tmp/lo.err" && ok \
  || { bad "a worker that dies before its first test (exit $rc)"; cat "$tmp/lo.err"; }
echo "$pass passed, $fail failed"
[ $fail = 0 ]
