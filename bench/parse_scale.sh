#!/usr/bin/env bash
# parse_scale.sh - is `trench parse` linear in its input? Writes modules
# with a growing number of unknown attributes on one instruction, of
# parameters in one computation, and of instructions in a chain, parses
# each (parse + verify + print) and prints the time and peak memory per
# item, and the ratio of each row's time per item to the first row's of
# its series: a ratio that stays near 1 as the count grows 10x is linear,
# one that grows with the count is quadratic.
# Usage: bench/parse_scale.sh [BUILD_DIR]   (default build)
set -eu
build=${1:-build}
trench="$build/trench"
[ -x "$trench" ] || { echo "no $trench: run make first" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen() { # KIND N > file
  python3 - "$1" "$2" <<'EOF'
import sys
kind, n = sys.argv[1], int(sys.argv[2])
out = ["HloModule scale", "ENTRY e {"]
if kind == "attrs":
    out.append("  p = f32[4] parameter(0)")
    out.append("  ROOT n = f32[4] negate(p), " + ", ".join("unknown%d=%d" % (i, i) for i in range(n)))
elif kind == "params":
    out += ["  p%d = f32[] parameter(%d)" % (i, i) for i in range(n)]
    out.append("  ROOT t = f32[] add(p0, p1)")
else:  # chain
    out.append("  x0 = f32[4] parameter(0)")
    out += ["  x%d = f32[4] negate(x%d)" % (i + 1, i) for i in range(n)]
    out.append("  ROOT r = f32[4] negate(x%d)" % n)
out.append("}")
print("\n".join(out))
EOF
}
printf '%-8s %8s %10s %10s %12s %8s\n' series count seconds "peak MB" "us per item" ratio
for kind in attrs params chain; do
  base=""
  for n in 1000 10000 100000; do
    gen "$kind" "$n" > "$tmp/m.hlo"
    /usr/bin/time -f '%e %M' -o "$tmp/t" "$trench" parse "$tmp/m.hlo" > /dev/null
    read -r secs kb < "$tmp/t"
    # /usr/bin/time has 10 ms resolution: time 5 runs of the small sizes
    reps=1
    if [ "$n" -lt 100000 ]; then
      reps=5
      start=$(date +%s.%N)
      for _ in 1 2 3 4 5; do "$trench" parse "$tmp/m.hlo" > /dev/null; done
      secs=$(echo "($(date +%s.%N) - $start) / $reps" | bc -l)
    fi
    per=$(echo "$secs * 1000000 / $n" | bc -l)
    [ -n "$base" ] || base=$per
    printf '%-8s %8d %10.3f %10.1f %12.2f %8.2f\n' "$kind" "$n" "$secs" "$(echo "$kb / 1024" | bc -l)" \
      "$per" "$(echo "$per / $base" | bc -l)"
  done
done
