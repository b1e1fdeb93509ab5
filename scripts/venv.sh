#!/usr/bin/env bash
# Creates the project virtualenv for the XLA adapter (adapters/xla) and
# prints its python's path on the last line of stdout. Quick when nothing
# changed: a stamp holds the hash of the requirements and the python
# version, and a matching stamp skips pip altogether.
#
#   scripts/venv.sh             .venv from adapters/xla/requirements.txt
#   scripts/venv.sh --jax VER   .venv/jax-VER with jax==VER and jaxlib==VER
#                               (pip picks their dependencies): to run an
#                               older or newer XLA side by side
#
# A fresh install downloads about 100 MB (jaxlib, scipy, numpy) and takes
# 10-60 s depending on the network; a no-op run takes well under a second.
# PYTHON overrides the interpreter (default python3).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
reqs="$root/adapters/xla/requirements.txt"
venv="$root/.venv"
tmpreq=""
if [ "${1:-}" = "--jax" ]; then
  ver=${2:?usage: scripts/venv.sh [--jax VERSION]}
  case $ver in *[!0-9.]*) echo "venv.sh: bad version '$ver'" >&2; exit 2;; esac
  venv="$root/.venv/jax-$ver"
  tmpreq=$(mktemp)
  trap 'rm -f "$tmpreq"' EXIT
  printf 'jax==%s\njaxlib==%s\n' "$ver" "$ver" > "$tmpreq"
  reqs=$tmpreq
elif [ $# -gt 0 ]; then
  echo "usage: scripts/venv.sh [--jax VERSION]" >&2
  exit 2
fi
tag=venv
. "$root/scripts/venvlib.sh"
stamp_want="$(sha256sum "$reqs" | cut -d' ' -f1) $(venv_pyver)"
venv_begin "$venv" "$stamp_want"
echo "venv: installing $(grep -v '^#' "$reqs" | tr '\n' ' ')" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$reqs" >&2
"$venv/bin/python" -c 'import jax, jaxlib, numpy, ml_dtypes' >&2
venv_end "$venv" "$stamp_want"
