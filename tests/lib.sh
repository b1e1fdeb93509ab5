# lib.sh - shared by the tests/cli_*.sh suites: a private temporary folder
# ($tmp, removed on exit), pass/fail counters and the checks below. A suite
# sources it, runs its checks and ends with `finish`.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
# expect RC PATTERN -- CMD...: runs CMD, checks its exit code and that
# stdout+stderr match PATTERN (grep -E).
expect() {
  local want=$1 pat=$2
  shift 3
  local out rc
  out=$("$@" 2>&1)
  rc=$?
  if [ "$rc" != "$want" ]; then bad "exit $rc (want $want): $*"; printf '%s\n' "$out" | tail -5; return; fi
  if ! printf '%s\n' "$out" | grep -Eq -- "$pat"; then bad "no /$pat/ in output of: $*"; printf '%s\n' "$out" | tail -5; return; fi
  ok
}
# The suite's last line, "N passed, N failed", and its exit status.
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
}
