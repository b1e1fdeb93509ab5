#!/usr/bin/env bash
# The past-release torch tier (make check-torch-releases): every module of
# tests/torch-findings is a torch.compile wrong-result bug of a past
# release (docs/TORCH.md, "Past releases"). Its second line says
#   // broken: VER  fixed: VER  options: CHECK-OPTIONS
# and this suite checks that `trench check --target torch-inductor@BROKEN`
# reports a finding (exit 1, a mismatch) and `@FIXED` passes (exit 0),
# with the same seeds and options. Creates the releases' virtualenvs with
# scripts/venv-torch.sh --torch VER when missing (about 5 GB and 2-8
# minutes each: past releases install their full CUDA dependency set).
# Not part of `make test` or .ci/run.
# Usage: tests/torch_releases.sh [BUILD_DIR]
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${1:-$root/build}
case $build in /*) ;; *) build=$PWD/$build;; esac
trench=$build/trench
# shellcheck source=tests/lib.sh
. "$here/lib.sh"
default=$(sed -n 's/^torch==//p' "$root/adapters/torch/requirements-torch.txt")
for m in "$here"/torch-findings/*.hlo; do
  line=$(sed -n 2p "$m")
  broken=$(printf '%s\n' "$line" | sed -n 's/.*broken: *\([0-9.]*\).*/\1/p')
  fixed=$(printf '%s\n' "$line" | sed -n 's/.*fixed: *\([0-9.]*\).*/\1/p')
  read -r -a opts <<< "$(printf '%s\n' "$line" | sed -n 's/.*options: *//p')"
  if [ -z "$broken" ] || [ -z "$fixed" ]; then bad "$m: no '// broken: VER  fixed: VER' line"; continue; fi
  # The default release (requirements-torch.txt) is the plain target.
  t_broken=torch-inductor@$broken t_fixed=torch-inductor@$fixed
  [ "$fixed" = "$default" ] && t_fixed=torch-inductor
  for v in "$broken" "$fixed"; do
    if [ "$v" = "$default" ]; then a=(); else a=(--torch "$v"); fi
    if ! bash "$root/scripts/venv-torch.sh" "${a[@]}" >/dev/null; then bad "cannot install torch $v"; continue 2; fi
  done
  name=$(basename "$m")
  expect 1 "check: finding .*$t_broken" -- "$trench" check "$m" --target "$t_broken" --seeds 2 --timeout 600 "${opts[@]}"
  expect 0 "check: pass .*$t_fixed" -- "$trench" check "$m" --target "$t_fixed" --seeds 2 --timeout 600 "${opts[@]}"
  echo "torch-findings: $name (broken $broken, fixed $fixed) checked"
done
finish
