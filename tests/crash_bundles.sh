#!/usr/bin/env bash
# kill -9 during `trench check --save` at random moments, N times: a folder
# under the bundle's real name must always be complete (COMPLETE marker,
# every file it lists), and no trial may leave a bundle without the marker.
# Usage: tests/crash_bundles.sh TRENCH N WORKDIR   (exit 0 when clean)
set -u
trench=$1; n=$2; work=$3
mkdir -p "$work"
# A module big enough that writing its bundle takes a few milliseconds.
cat > "$work/big.hlo" <<'HLO'
HloModule big
ENTRY e {
  p = f32[256,1024] parameter(0)
  q = f32[256,1024] parameter(1)
  ROOT r = f32[256,1024] add(p, q)
}
HLO
# One full run first: the kills land anywhere in its duration (ms).
t0=$(date +%s%N)
"$trench" check "$work/big.hlo" --target interp --seeds 1 --save "$work/full" >/dev/null 2>&1
full=$(( ($(date +%s%N) - t0) / 1000000 + 1 ))
[ -f "$work/full/COMPLETE" ] || { echo "crash_bundles: the uninterrupted run left no complete bundle"; exit 1; }
rm -rf "$work/full"
bad=0 complete=0 none=0
for i in $(seq 1 "$n"); do
  d="$work/b$i"
  "$trench" check "$work/big.hlo" --target interp --seeds 1 --save "$d" >/dev/null 2>&1 &
  pid=$!
    ms=$(( (RANDOM * 32768 + RANDOM) % (full * 12 / 10 + 1) ))
  sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if [ -e "$d" ]; then
    if [ -f "$d/COMPLETE" ] && [ -s "$d/module.hlo" ] && [ -s "$d/in0.npy" ] && [ -s "$d/in1.npy" ] \
       && [ -s "$d/report.json" ] && [ -s "$d/README.md" ]; then complete=$((complete + 1))
    else bad=$((bad + 1)); echo "incomplete bundle: $d"; ls -la "$d"; fi
  else none=$((none + 1)); fi
  rm -rf "$d" "$work"/.b"$i".partial-* 2>/dev/null
done
echo "crash_bundles: $n trials: $complete complete, $none none, $bad partial or mixed"
[ "$bad" = 0 ]
