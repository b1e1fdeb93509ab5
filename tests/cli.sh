#!/usr/bin/env bash
# cli.sh - end-to-end tests of the trench command line: help and exit codes,
# parse (canonical text, round trip, located errors) and stats (exact counts,
# percentiles, JSON). Prints a line per failed check and ends with
# "N passed, N failed".
# Usage: bash tests/cli.sh BUILD/trench TESTS_DIR
set -u
trench=${1:?usage: cli.sh TRENCH TESTS_DIR}
tests=${2:-tests}
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$trench" ]; then
  echo "FAIL: $trench is not an executable"
  echo "0 passed, 1 failed"
  exit 1
fi
# Absolute, so checks may run trench from inside $tmp.
trench=$(cd "$(dirname "$trench")" && pwd)/$(basename "$trench")

ok() { pass=$((pass + 1)); }
no() { fail=$((fail + 1)); echo "FAIL: $*"; }
# check NAME COMMAND...: passes when COMMAND succeeds.
# A failing check prints its name and, when the helper left one, a $note.
note=""
check() {
  local name=$1; shift
  note=""
  if "$@"; then ok; else no "$name${note:+ ($note)}"; fi
}
# t ARGS...: runs trench; stdout in $tmp/out, stderr in $tmp/err, status in $rc.
t() { "$trench" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
# ti INPUT ARGS...: the same with stdin from INPUT.
ti() { local in=$1; shift; "$trench" "$@" <"$in" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
not() { ! "$@"; }
rc_is() { [ "$rc" = "$1" ] || { note="exit $rc, expected $1"; false; }; }
out_has() { grep -qE -- "$1" "$tmp/out"; }
err_has() { grep -qE -- "$1" "$tmp/err"; }
out_empty() { [ ! -s "$tmp/out" ]; }
# field NAME: the value of a "  NAME  value" line of stats text output.
field() { awk -v k="$1" '$1 == k { print $2; exit }' "$tmp/out"; }

# ---- global options and help ----
t --version
check "--version exits 0" rc_is 0
check "--version prints the version" grep -qx "trench 0.1.0" "$tmp/out"
t --help
check "--help exits 0" rc_is 0
check "--help lists parse" out_has '^  parse '
check "--help lists stats" out_has '^  stats '
check "--help documents exit code 2" out_has '^  2  usage error'
t -h
check "-h exits 0" rc_is 0
t
check "no command exits 2" rc_is 2
check "no command prints usage on stderr" err_has '^Usage: trench'
t frobnicate
check "unknown command exits 2" rc_is 2
check "unknown command is named" err_has "unknown command 'frobnicate'"
check "unknown command gives a usage hint" err_has "trench --help"
check "unknown command prints nothing on stdout" out_empty
t --frobnicate
check "unknown global option exits 2" rc_is 2
t help parse
check "help parse exits 0" rc_is 0
check "help parse shows the usage" out_has '^Usage: trench parse'
cp "$tmp/out" "$tmp/help1"
t parse --help
check "parse --help exits 0" rc_is 0
check "help parse equals parse --help" cmp -s "$tmp/out" "$tmp/help1"
check "parse --help documents exit codes" out_has '^  1  some FILE has a syntax'
t stats -h
check "stats -h exits 0" rc_is 0
check "stats -h documents --json" out_has '[-]-json'
t help
check "help without a command exits 0" rc_is 0
check "help without a command lists the commands" out_has '^  stats '
t help nope
check "help of an unknown command exits 2" rc_is 2
t parse --bogus x.hlo
check "unknown parse option exits 2" rc_is 2
check "unknown parse option is named" err_has "trench parse: unknown option '--bogus'"
check "unknown parse option hints at parse --help" err_has "trench parse --help"
t parse -qz x.hlo
check "glued value on a flag exits 2" rc_is 2
t stats --json=yes x.hlo
check "value on --json exits 2" rc_is 2
check "value on --json is reported" err_has "takes no value"
t parse
check "parse without files exits 2" rc_is 2
t stats
check "stats without files exits 2" rc_is 2
t parse -o
check "-o without a value exits 2" rc_is 2

# ---- inputs written for these tests ----
# Two loop fusions; one elided constant; a tuple root. Expected counts:
# computations 3, fusion bodies 2 (8 instructions), entry 9 instructions.
cat >"$tmp/fus.hlo" <<'EOF'
HloModule two_fusions, entry_computation_layout={(f32[4]{0}, f32[4]{0})->(f32[4]{0}, pred[4]{0}, s32[4]{0})}

%fused_computation (p.0: f32[4], p.1: f32[4]) -> f32[4] {
  %p.0 = f32[4]{0} parameter(0)
  %p.1 = f32[4]{0} parameter(1)
  %add.0 = f32[4]{0} add(%p.0, %p.1)
  ROOT %mul.0 = f32[4]{0} multiply(%add.0, %p.1)
}

%fused_computation.1 (q.0: f32[4]) -> f32[4] {
  %q.0 = f32[4]{0} parameter(0)
  %c.0 = f32[] constant(2)
  %b.0 = f32[4]{0} broadcast(%c.0), dimensions={}
  ROOT %sub.0 = f32[4]{0} subtract(%q.0, %b.0)
}

ENTRY %main (a: f32[4], b: f32[4]) -> (f32[4], pred[4], s32[4]) {
  %a = f32[4]{0} parameter(0)
  %b = f32[4]{0} parameter(1)
  %k = f32[4]{0} constant({...})
  %i = s32[4]{0} iota(), iota_dimension=0
  %fusion = f32[4]{0} fusion(%a, %b), kind=kLoop, calls=%fused_computation
  %fusion.1 = f32[4]{0} fusion(%fusion), kind=kLoop, calls=%fused_computation.1
  %sum = f32[4]{0} add(%fusion.1, %k)
  %cmp = pred[4]{0} compare(%sum, %a), direction=LT
  ROOT %t = (f32[4]{0}, pred[4]{0}, s32[4]{0}) tuple(%sum, %cmp, %i)
}
EOF

# chain N: a module of one parameter and N negates (N+1 instructions),
# short form (bare names, no program shape).
chain() {
  local n=$1 prev=x
  printf 'HloModule chain%d\n\nENTRY main {\n  x = f32[2]{0} parameter(0)\n' "$n"
  for ((j = 1; j <= n; j++)); do
    local root=""
    [ "$j" = "$n" ] && root="ROOT "
    printf '  %sn%d = f32[2]{0} negate(%s)\n' "$root" "$j" "$prev"
    prev=n$j
  done
  printf '}\n'
}
chain 2 >"$tmp/c3.hlo"
chain 4 >"$tmp/c5.hlo"
chain 6 >"$tmp/c7.hlo"

# Syntax error: the '=' after the instruction name is missing (line 4, col 6).
cat >"$tmp/noeq.hlo" <<'EOF'
HloModule noeq

ENTRY %main {
  %x f32[2]{0} parameter(0)
  ROOT %y = f32[2]{0} negate(%x)
}
EOF
# Syntax error: unknown opcode.
cat >"$tmp/badop.hlo" <<'EOF'
HloModule badop

ENTRY %main {
  %x = f32[2]{0} parameter(0)
  ROOT %y = f32[2]{0} frobnicate(%x)
}
EOF
# Parses, but fails verification: negate cannot change the shape.
cat >"$tmp/badshape.hlo" <<'EOF'
HloModule badshape

ENTRY %main {
  %x = f32[2]{0} parameter(0)
  ROOT %y = f32[3]{0} negate(%x)
}
EOF

# ---- parse ----
t parse "$tmp/fus.hlo"
check "parse of a good module exits 0" rc_is 0
check "parse prints the module" out_has '^HloModule two_fusions'
check "parse keeps the fusion kind" out_has 'kind=kLoop'
check "parse prints no diagnostics" [ ! -s "$tmp/err" ]
cp "$tmp/out" "$tmp/fus1.txt"
"$trench" parse "$tmp/fus1.txt" >"$tmp/fus2.txt" 2>"$tmp/err"
check "canonical text parses again" [ $? = 0 ]
check "parse | parse is the identity on canonical text" cmp -s "$tmp/fus1.txt" "$tmp/fus2.txt"
ti "$tmp/fus.hlo" parse -
check "parse - reads stdin" rc_is 0
check "parse - prints the same text" cmp -s "$tmp/out" "$tmp/fus1.txt"
t parse "$tmp/c3.hlo"
cp "$tmp/out" "$tmp/c3.txt"
ti "$tmp/c3.txt" parse -
check "short-form module round-trips" cmp -s "$tmp/out" "$tmp/c3.txt"
t parse "$tmp/c3.hlo" "$tmp/fus.hlo"
check "parse of two files exits 0" rc_is 0
check "parse of two files prints both" [ "$(grep -c '^HloModule' "$tmp/out")" = 2 ]
t parse -q "$tmp/fus.hlo"
check "parse -q exits 0" rc_is 0
check "parse -q prints nothing" out_empty
check "parse -q prints no diagnostics" [ ! -s "$tmp/err" ]
t parse -o "$tmp/o.hlo" "$tmp/fus.hlo"
check "parse -o exits 0" rc_is 0
check "parse -o prints nothing on stdout" out_empty
check "parse -o writes the canonical text" cmp -s "$tmp/o.hlo" "$tmp/fus1.txt"
t parse --output="$tmp/o2.hlo" "$tmp/fus.hlo"
check "parse --output= writes the text" cmp -s "$tmp/o2.hlo" "$tmp/fus1.txt"
t parse -o "$tmp/o3.hlo" "$tmp/fus.hlo" "$tmp/c3.hlo"
check "parse -o with two inputs exits 2" rc_is 2
check "parse -o with two inputs writes nothing" [ ! -e "$tmp/o3.hlo" ]
t parse -o "$tmp/nodir/o.hlo" "$tmp/fus.hlo"
check "parse -o into a missing directory exits 2" rc_is 2

t parse "$tmp/noeq.hlo"
check "syntax error exits 1" rc_is 1
check "syntax error prints no text" out_empty
check "syntax error is located: file:line:col: error: expected" \
  err_has "^$tmp/noeq.hlo:4:6: error: expected"
check "syntax error shows the source line" err_has '^    %x f32\[2\]\{0\} parameter\(0\)$'
check "syntax error shows a caret under the column" grep -qx '       \^' "$tmp/err"
ti "$tmp/noeq.hlo" parse -
check "syntax error on stdin names <stdin>" err_has '^<stdin>:4:6: error: '
t parse "$tmp/badop.hlo"
check "unknown opcode exits 1" rc_is 1
check "unknown opcode is located" err_has "^$tmp/badop.hlo:5:[0-9]+: error: "
t parse -o "$tmp/o4.hlo" "$tmp/noeq.hlo"
check "parse -o of a bad file exits 1" rc_is 1
check "parse -o of a bad file writes nothing" [ ! -e "$tmp/o4.hlo" ]
t parse "$tmp/badshape.hlo"
check "verify error exits 1" rc_is 1
check "verify error prints no text" out_empty
check "verify error is located" err_has "^$tmp/badshape.hlo:5:[0-9]+: error: "
t parse --no-verify "$tmp/badshape.hlo"
check "--no-verify accepts a module the verifier rejects" rc_is 0
check "--no-verify prints the text" out_has 'negate'
t parse "$tmp/noeq.hlo" "$tmp/fus.hlo"
check "one bad file of two exits 1" rc_is 1
check "the good file is still printed" out_has '^HloModule two_fusions'
t parse "$tmp/missing.hlo"
check "missing file exits 2" rc_is 2
check "missing file is named" err_has "$tmp/missing.hlo"
t parse "$tmp/missing.hlo" "$tmp/noeq.hlo" "$tmp/fus.hlo"
check "missing and bad files exit 2 (the higher code)" rc_is 2
check "the good file after a missing one is still printed" out_has '^HloModule two_fusions'

t parse "$tmp"
check "a directory as input exits 2" rc_is 2
ti "$tmp/fus.hlo" parse -- -
check "-- ends options; - after it is still stdin" rc_is 0
cp "$tmp/fus.hlo" "$tmp/-dash.hlo"
(cd "$tmp" && "$trench" parse -q -- -dash.hlo >/dev/null 2>&1)
check "-- lets a file name start with a dash" [ $? = 0 ]
(cd "$tmp" && "$trench" parse -q -dash.hlo >/dev/null 2>&1)
check "without --, a dash name is an option" [ $? = 2 ]

# Every test module that parses must print canonical text that is a fixed
# point of parse.
shopt -s nullglob
for f in "$tests"/hlo/*.hlo; do
  "$trench" parse --no-verify "$f" >"$tmp/r1" 2>/dev/null || continue
  "$trench" parse --no-verify - <"$tmp/r1" >"$tmp/r2" 2>"$tmp/err"
  check "round trip of $(basename "$f")" cmp -s "$tmp/r1" "$tmp/r2"
done
shopt -u nullglob

# ---- stats ----
t stats "$tmp/fus.hlo"
check "stats exits 0" rc_is 0
check "stats names the file" out_has "^file: $tmp/fus.hlo$"
check "stats: module" [ "$(field module)" = two_fusions ]
check "stats: computations" [ "$(field computations)" = 3 ]
check "stats: fusion_computations" [ "$(field fusion_computations)" = 2 ]
check "stats: instructions" [ "$(field instructions)" = 17 ]
check "stats: entry_instructions" [ "$(field entry_instructions)" = 9 ]
check "stats: fusions" [ "$(field fusions)" = 2 ]
check "stats: fused_instructions" [ "$(field fused_instructions)" = 8 ]
check "stats: parameters" [ "$(field parameters)" = 5 ]
check "stats: entry_parameters" [ "$(field entry_parameters)" = 2 ]
check "stats: constants" [ "$(field constants)" = 2 ]
check "stats: elided_constants" [ "$(field elided_constants)" = 1 ]
check "stats: ops histogram" [ "$(field parameter)/$(field add)/$(field fusion)/$(field tuple)" = 5/2/2/1 ]
check "stats: dtypes count tuple leaves" [ "$(field f32)/$(field pred)/$(field s32)" = 15/2/2 ]
# Sorted by count, ties by name.
awk '/^  ops:/ { on = 1; next } /^  [a-z]/ { on = 0 } on { printf "%s ", $1 }' \
  "$tmp/out" >"$tmp/order"
check "stats: ops sorted by count, then name" \
  [ "$(cat "$tmp/order")" = "parameter add constant fusion broadcast compare iota multiply subtract tuple " ]
check "stats of one file has no percentile table" not out_has '^percentiles'

t stats "$tmp/c7.hlo" "$tmp/fus.hlo" "$tmp/c3.hlo" "$tmp/c5.hlo"
check "stats of four files exits 0" rc_is 0
check "stats of four files reports each" [ "$(grep -c '^file: ' "$tmp/out")" = 4 ]
check "percentile table header" out_has '^  metric +p0 +p10 +p25 +p50 +p75 +p90 +p100$'
check "percentiles over 4 files" out_has '^percentiles over 4 files:$'
# instructions 3 5 7 17 (nearest rank): p0 3, p10 3, p25 3, p50 5, p75 7, p90 17, p100 17
check "percentiles of instructions" out_has '^  instructions +3 +3 +3 +5 +7 +17 +17$'
check "percentiles of fusions" out_has '^  fusions +0 +0 +0 +0 +0 +2 +2$'
check "percentiles of fused_instructions" out_has '^  fused_instructions +0 +0 +0 +0 +0 +8 +8$'
check "percentiles of computations" out_has '^  computations +1 +1 +1 +1 +1 +3 +3$'

t stats "$tmp/c3.hlo" "$tmp/noeq.hlo" "$tmp/c5.hlo" "$tmp/c7.hlo"
check "stats with a bad file exits 1" rc_is 1
check "stats reports the bad file" err_has "^$tmp/noeq.hlo:4:6: error: "
check "stats skips the bad file" [ "$(grep -c '^file: ' "$tmp/out")" = 3 ]
check "percentiles over the files read" out_has '^  instructions +3 +3 +3 +5 +7 +7 +7$'
t stats "$tmp/c3.hlo" "$tmp/missing.hlo"
check "stats with a missing file exits 2" rc_is 2
t stats "$tmp/badshape.hlo"
check "stats does not verify by default" rc_is 0
t stats --verify "$tmp/badshape.hlo"
check "stats --verify rejects a bad module" rc_is 1

t stats --json "$tmp/fus.hlo" "$tmp/c3.hlo" "$tmp/c5.hlo" "$tmp/noeq.hlo"
check "stats --json with a bad file exits 1" rc_is 1
check "stats --json prints JSON and the checks hold" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = d["files"][0]
want = dict(module="two_fusions", computations=3, fusion_computations=2,
            instructions=17, entry_instructions=9, fusions=2,
            fused_instructions=8, parameters=5, entry_parameters=2,
            constants=2, elided_constants=1)
bad = [k for k, v in want.items() if f.get(k) != v]
assert not bad, ("fields", bad, f)
assert f["file"].endswith("fus.hlo"), f["file"]
assert f["ops"] == {"parameter": 5, "add": 2, "constant": 2, "fusion": 2,
    "broadcast": 1, "compare": 1, "iota": 1, "multiply": 1, "subtract": 1,
    "tuple": 1}, f["ops"]
assert list(f["ops"])[0] == "parameter"
assert f["dtypes"] == {"f32": 15, "pred": 2, "s32": 2}, f["dtypes"]
assert [g["instructions"] for g in d["files"]] == [17, 3, 5]
assert len(d["failed"]) == 1 and d["failed"][0].endswith("noeq.hlo"), d["failed"]
p = d["percentiles"]
assert p["files"] == 3, p
assert p["instructions"] == dict(p0=3, p10=3, p25=3, p50=5, p75=17, p90=17,
                                 p100=17), p["instructions"]
assert p["fusions"]["p50"] == 0 and p["fusions"]["p100"] == 2, p["fusions"]
assert p["fused_instructions"]["p100"] == 8 and p["computations"]["p50"] == 1, p
' "$tmp/out"
t stats --json "$tmp/c3.hlo"
check "stats --json of one file has no percentiles" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "percentiles" not in d and d["failed"] == [] and len(d["files"]) == 1
assert d["files"][0]["ops"] == {"negate": 2, "parameter": 1}, d
' "$tmp/out"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
