#!/usr/bin/env bash
# Creates the virtualenv of the IREE adapter (adapters/iree) and prints its
# python's path on the last line of stdout. Like scripts/venv.sh: a stamp
# holds the hash of the requirements and the python version, a matching
# stamp skips pip, and a lock keeps parallel suites from installing twice.
#
#   scripts/venv-iree.sh             .venv/iree from adapters/iree/requirements.txt
#   scripts/venv-iree.sh --iree VER  .venv/iree-VER with iree-base-compiler==VER
#                                    and iree-base-runtime==VER (pip picks
#                                    their dependencies): another IREE release
#                                    side by side (target iree-cpu@VER)
#
# The adapter converts HLO to StableHLO with jax in .venv, so this script
# runs scripts/venv.sh first. A fresh install downloads about 110 MB (the
# IREE compiler wheel is most of it) and unpacks to about 550 MB.
# PYTHON overrides the interpreter (default python3).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
reqs="$root/adapters/iree/requirements.txt"
venv="$root/.venv/iree"
tmpreq=""
if [ "${1:-}" = "--iree" ]; then
  ver=${2:?usage: scripts/venv-iree.sh [--iree VERSION]}
  case $ver in *[!0-9.]*|"") echo "venv-iree.sh: bad version '$ver'" >&2; exit 2;; esac
  venv="$root/.venv/iree-$ver"
  tmpreq=$(mktemp)
  trap 'rm -f "$tmpreq"' EXIT
  printf 'iree-base-compiler==%s\niree-base-runtime==%s\n' "$ver" "$ver" > "$tmpreq"
  reqs=$tmpreq
elif [ $# -gt 0 ]; then
  echo "usage: scripts/venv-iree.sh [--iree VERSION]" >&2
  exit 2
fi
bash "$root/scripts/venv.sh" >&2
tag=venv-iree
. "$root/scripts/venvlib.sh"
stamp_want="$(sha256sum "$reqs" | cut -d' ' -f1) $(venv_pyver)"
venv_begin "$venv" "$stamp_want"
echo "venv-iree: installing $(grep -v '^#' "$reqs" | tr '\n' ' ')" >&2
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r "$reqs" >&2
"$venv/bin/python" -c 'import iree.compiler, iree.runtime, numpy' >&2
test -x "$venv/bin/iree-compile"
venv_end "$venv" "$stamp_want"
