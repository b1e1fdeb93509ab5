#!/usr/bin/env bash
# End-to-end tests of `trench compile`: the emitted C compiles with cc -c,
# --fuel, --disable, --inject and --dump-after change what they should,
# --jit cc and tcc compile it, errors are located and exit as docs/CLI.md
# says. Usage: tests/cli_compile.sh TRENCH TESTS_DIR
# Ends with "N passed, N failed".
set -u
trench=$1
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"
# check COND MESSAGE
check() { if eval "$1"; then ok; else bad "$2"; fi; }

# A module the simplifier, DCE and fusion all change: 8 rewrites.
cat > "$tmp/s.hlo" <<'EOF'
HloModule s
ENTRY e {
  x = f32[9] parameter(0)
  z = f32[] constant(0)
  zb = f32[9] broadcast(z), dimensions={}
  a = f32[9] add(x, zb)
  n = f32[9] negate(a)
  nn = f32[9] negate(n)
  ROOT m = f32[9] multiply(nn, x)
}
EOF

# The translation unit: to -o, the same on stdout, and it compiles.
expect 0 'rewrites: 8 \(simplify 2, dce 4, fusion 2\)' -- "$trench" compile "$tmp/s.hlo" -o "$tmp/s.c"
check '[ -s "$tmp/s.c" ] && grep -q "^int trench_entry(u8 \*\*in, u8 \*\*out) {" "$tmp/s.c"' \
  "-o wrote no unit with trench_entry"
"$trench" compile "$tmp/s.hlo" -q > "$tmp/s2.c" 2> "$tmp/s2.err"
check 'cmp -s "$tmp/s.c" "$tmp/s2.c"' "stdout and -o differ"
check '[ ! -s "$tmp/s2.err" ]' "-q still printed to stderr"
check 'cc -std=c11 -c -o "$tmp/s.o" "$tmp/s.c" 2> "$tmp/cc.err"' "emitted C does not compile: $(head -3 "$tmp/cc.err" 2>/dev/null)"
check 'nm "$tmp/s.o" | grep -q " T trench_entry"' "the object does not export trench_entry"
# Every example compiles with cc -c as well.
for f in "$root"/examples/*.hlo; do
  "$trench" compile -q "$f" -o "$tmp/ex.c" &&
    cc -std=c11 -w -c -o "$tmp/ex.o" "$tmp/ex.c" && ok || bad "$f: emitted C does not compile"
done
# stdin
expect 0 'trench_entry' -- bash -c "\"$trench\" compile -q - < \"$tmp/s.hlo\""

# The summary counts rules; --emit hlo writes the optimized module with its fusion.
expect 0 'negate-of-negate +1' -- "$trench" compile "$tmp/s.hlo" --emit none
expect 0 'fuse-elementwise +1' -- "$trench" compile "$tmp/s.hlo" --emit none
"$trench" compile -q "$tmp/s.hlo" --emit hlo -o "$tmp/opt.hlo"
check 'grep -q "fusion(%x), kind=kLoop" "$tmp/opt.hlo" && ! grep -q negate "$tmp/opt.hlo"' \
  "--emit hlo: no loop fusion, or negates left"
expect 0 '' -- "$trench" parse -q "$tmp/opt.hlo"

# --fuel: 0 rewrites nothing, 1 only the first; the output changes accordingly.
expect 0 'rewrites: 0' -- "$trench" compile "$tmp/s.hlo" --fuel 0 --emit none
expect 0 'fuel: 0 of 0 used \(spent' -- "$trench" compile "$tmp/s.hlo" --fuel 0 --emit none
expect 0 'rewrites: 1 \(simplify 1\)' -- "$trench" compile "$tmp/s.hlo" --fuel 1 --emit none
"$trench" compile -q "$tmp/s.hlo" --fuel 0 --emit hlo -o "$tmp/f0.hlo"
check '[ "$(grep -c negate "$tmp/f0.hlo")" = 2 ] && ! grep -q fusion "$tmp/f0.hlo"' "--fuel 0 changed the module"
"$trench" compile -q "$tmp/s.hlo" --fuel 0 -o "$tmp/f0.c"
check '! cmp -s "$tmp/f0.c" "$tmp/s.c"' "--fuel 0 gives the same C as unlimited fuel"
check 'cc -std=c11 -w -c -o "$tmp/f0.o" "$tmp/f0.c"' "--fuel 0 C does not compile"

# --disable: a pass, a rule.
expect 0 'passes: .*fusion\(off\)' -- "$trench" compile "$tmp/s.hlo" --disable fusion --emit none
"$trench" compile -q "$tmp/s.hlo" --disable fusion --emit hlo -o "$tmp/nf.hlo"
check '! grep -q fusion "$tmp/nf.hlo" && ! grep -q negate "$tmp/nf.hlo"' "--disable fusion: fused, or did not simplify"
"$trench" compile -q "$tmp/s.hlo" --disable negate-of-negate --emit hlo -o "$tmp/nn.hlo"
check '[ "$(grep -c negate "$tmp/nn.hlo")" = 2 ]' "--disable negate-of-negate still removed the negates"

# --inject: the tail-mask defect changes the lane loop's tail test only.
"$trench" compile -q "$tmp/s.hlo" --inject emit-tail-mask-short -o "$tmp/inj.c"
check '[ "$(diff "$tmp/s.c" "$tmp/inj.c" | grep -c "^[<>]")" = 2 ] && grep -q "< n - 1)" "$tmp/inj.c"' \
  "--inject emit-tail-mask-short: not exactly the tail test changed"

# --dump-after: the module after each run of the pass, on stderr.
"$trench" compile -q "$tmp/s.hlo" --dump-after simplify -o "$tmp/d.c" 2> "$tmp/d.err"
check 'grep -q "^// after pass simplify (run 1)$" "$tmp/d.err" && grep -q "^// after pass simplify (run 2), unchanged$" "$tmp/d.err"' \
  "--dump-after simplify: no dumps of runs 1 and 2"
check 'cmp -s "$tmp/d.c" "$tmp/s.c"' "--dump-after changed the C"

# --run: once against the reference; a planted defect shows as a difference.
expect 0 '^out0: f32\[9\] same as the reference$' -- "$trench" compile -q "$tmp/s.hlo" --run --emit none
expect 1 'out0: f32\[9\] differs in 1 of 9 elements; first at \[8\]: reference [-0-9.e]+ \(0x[0-9a-f]+\), builtin 0 \(0x0\)' -- \
  "$trench" compile -q "$tmp/s.hlo" --run --emit none --inject emit-tail-mask-short
expect 0 'run: seed 7, kernel [0-9.]+ ms' -- bash -c "\"$trench\" compile -q - --run --seed 7 --emit none < \"$tmp/s.hlo\""
expect 2 "--seed wants a number" -- "$trench" compile "$tmp/s.hlo" --run --seed x

# --jit: both backends compile it.
expect 0 'jit: cc compiled it in [0-9.]+ ms' -- "$trench" compile "$tmp/s.hlo" --jit cc --emit none
# A build without libtcc (make TCC=0) says so; the tcc checks are skipped.
if "$trench" compile -q "$tmp/s.hlo" --jit tcc --emit none 2>&1 | grep -q "no libtcc"; then
  echo "(built without libtcc: tcc checks skipped)"
  expect 2 'no libtcc' -- "$trench" compile "$tmp/s.hlo" --jit tcc --emit none
else
  expect 0 'jit: tcc compiled it in [0-9.]+ ms' -- "$trench" compile "$tmp/s.hlo" --jit tcc --emit none
  # The builtin target takes the same backend choice.
  expect 0 'pass' -- "$trench" check "$tmp/s.hlo" --target builtin:jit=tcc --seeds 2
  expect 1 'differs in 1 of 9 elements' -- \
    "$trench" compile -q "$tmp/s.hlo" --run --jit tcc --emit none --inject emit-tail-mask-short
fi
expect 2 "unknown or malformed option 'jit=gcc'" -- "$trench" check "$tmp/s.hlo" --target builtin:jit=gcc

# Errors: located syntax error (1), unreadable (2), usage (2), unsupported (2).
expect 1 'bad_direction.hlo:6:50: error: bad value for direction' -- "$trench" compile "$tests/bad/bad_direction.hlo"
expect 2 'nope.hlo' -- "$trench" compile "$tmp/nope.hlo"
expect 2 "'no-such-pass' is neither a pass nor a rewrite rule" -- "$trench" compile "$tmp/s.hlo" --disable no-such-pass
expect 2 "unknown defect 'no-such-defect'" -- "$trench" compile "$tmp/s.hlo" --inject no-such-defect
expect 2 "--dump-after: no pass 'fusionn'" -- "$trench" compile "$tmp/s.hlo" --dump-after fusionn
expect 2 "--fuel wants a count" -- "$trench" compile "$tmp/s.hlo" --fuel -3
expect 2 "--jit takes cc or tcc" -- "$trench" compile "$tmp/s.hlo" --jit gcc
expect 2 "--emit takes c, hlo or none" -- "$trench" compile "$tmp/s.hlo" --emit asm
expect 2 "no MODULE given" -- "$trench" compile
expect 2 "cannot write" -- "$trench" compile "$tmp/s.hlo" -o "$tmp/no/such/dir/x.c"
cat > "$tmp/cc.hlo" <<'EOF'
HloModule u
ENTRY e {
  x = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(x), custom_call_target="foo"
}
EOF
expect 2 'cc.hlo:4:8: error: in %c: unsupported: custom-call in builtin' -- "$trench" compile "$tmp/cc.hlo"
expect 0 'compile +compile a module with the built-in compiler' -- "$trench" --help
expect 0 'Usage: trench compile' -- "$trench" compile --help

finish
