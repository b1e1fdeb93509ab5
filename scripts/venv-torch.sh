#!/usr/bin/env bash
# Creates the virtualenv for the PyTorch adapter (adapters/torch) and
# prints its python's path on the last line of stdout. Quick when nothing
# changed: a stamp holds the hash of the pins and the python version, and
# a matching stamp skips pip altogether.
#
#   scripts/venv-torch.sh             .venv-torch with the pins of
#                                     adapters/torch/requirements.txt
#   scripts/venv-torch.sh --torch VER .venv-torch-VER with torch==VER
#
# PyPI's Linux torch wheels are CUDA builds whose metadata pulls about
# 3 GB of nvidia-* packages. trench runs torch on the CPU only, so the
# lean install takes the torch wheel without its dependencies, then its
# pure-Python dependencies (adapters/torch/requirements.txt), then only
# the CUDA libraries torch's shared objects cannot load without
# (requirements-cuda.txt: cufile, cusparseLt, nvshmem, nccl; the rest of
# the CUDA runtime comes from the system's CUDA when it has one). If
# `import torch` still fails, pip installs torch's full dependency set.
# Measured numbers are in docs/TORCH.md. PYTHON overrides the
# interpreter (default python3).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
dir="$root/adapters/torch"
venv="$root/.venv-torch"
ver=$(sed -n 's/^torch==//p' "$dir/requirements-torch.txt")
if [ "${1:-}" = "--torch" ]; then
  ver=${2:?usage: scripts/venv-torch.sh [--torch VERSION]}
  case $ver in *[!0-9.]*) echo "venv-torch.sh: bad version '$ver'" >&2; exit 2;; esac
  venv="$root/.venv-torch-$ver"
elif [ $# -gt 0 ]; then
  echo "usage: scripts/venv-torch.sh [--torch VERSION]" >&2
  exit 2
fi
tag=venv-torch
. "$root/scripts/venvlib.sh"
stamp_want="$ver $(cat "$dir/requirements.txt" "$dir/requirements-cuda.txt" | sha256sum | cut -d' ' -f1) $(venv_pyver)"
venv_begin "$venv" "$stamp_want"
# --no-warn-conflicts: pip would list the CUDA packages left out on purpose.
pip="$venv/bin/python -m pip install -q --disable-pip-version-check --no-warn-conflicts"
if [ "$ver" = "$(sed -n 's/^torch==//p' "$dir/requirements-torch.txt")" ]; then
  echo "venv-torch: installing torch==$ver (without its CUDA dependencies)" >&2
  $pip --no-deps "torch==$ver" >&2
  $pip -r "$dir/requirements.txt" >&2
  # Only the libraries torch's own shared objects link against; the pins
  # are those of torch's metadata for the default release.
  $pip --no-deps -r "$dir/requirements-cuda.txt" >&2
else
  # Another release (the release sweep, past bugs): its own dependency
  # set, as pip resolves it; the pins above are the default release's.
  # Releases before 2.3 were built against numpy 1 and cannot load 2.
  case $ver in
    1.*|2.[012]|2.[012].*) np='numpy<2';;
    *) np=numpy;;
  esac
  echo "venv-torch: installing torch==$ver with its dependencies" >&2
  $pip "torch==$ver" "$np" >&2
fi
if ! "$venv/bin/python" -c 'import torch' >/dev/null 2>&1; then
  echo "venv-torch: import torch fails without the full CUDA set; installing torch's dependencies" >&2
  $pip "torch==$ver" >&2
fi
"$venv/bin/python" -c 'import torch, numpy' >&2
venv_end "$venv" "$stamp_want"
