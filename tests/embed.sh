#!/usr/bin/env bash
# The embedding example (examples/embed.c, only include/trench.h) built by
# make: it evaluates a module, checks it on builtin (pass) and with a
# planted defect (finding). Usage: tests/embed.sh BUILD TESTS_DIR
set -u
build=$1
tests=$(cd "$2" && pwd)
root=$(cd "$tests/.." && pwd)
. "$tests/lib.sh"
embed="$build/embed"
[ -x "$embed" ] || { bad "no $embed (make builds it)"; finish; }
expect 0 '^reference out0: f32\[' -- "$embed" "$root/examples/mlp.hlo"
expect 0 '^check: pass' -- "$embed" "$root/examples/mlp.hlo" builtin
expect 1 '^check: finding' -- "$embed" "$root/tests/defects/emit-tail-mask-short.hlo" builtin:inject=emit-tail-mask-short
expect 2 'nosuchtarget' -- "$embed" "$root/examples/mlp.hlo" nosuchtarget
printf 'HloModule x\nENTRY e {\n  ROOT p = f32[2] parameter(0\n}\n' > "$tmp/bad.hlo"
expect 1 'bad.hlo:4:1: error: expected' -- "$embed" "$tmp/bad.hlo"
finish
