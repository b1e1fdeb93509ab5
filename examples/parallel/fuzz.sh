#!/usr/bin/env bash
# fuzz.sh - a trench fuzz campaign in N shards with GNU parallel on one
# machine (or several: parallel --sshloginfile), merged at the end
# (docs/FUZZ.md, "Scale-out").
#   examples/parallel/fuzz.sh OUT N TARGET DURATION [SEED]
#   examples/parallel/fuzz.sh camp 8 builtin 10m 1
set -eu
out=$1 n=$2 target=$3 time=$4 seed=${5:-0}
trench=${TRENCH:-trench}
mkdir -p "$out"
seq 0 $((n - 1)) | parallel -j "$n" --halt never \
  "$trench fuzz --target '$target' --seed $seed --shard {}/$n --time $time --out '$out/shard-{}' --resume -q || [ \$? = 1 ]"
"$trench" merge --out "$out/merged" "$out"/shard-*
