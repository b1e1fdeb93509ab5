# venvlib.sh - what the virtualenv scripts (venv.sh, venv-iree.sh,
# venv-torch.sh) share: one install at a time, a stamp that skips pip when
# nothing changed, creation and the closing report. Sourced, not run.
# The caller sets $py (the interpreter) and $tag (its name in messages).

# venv_begin VENV STAMP: takes VENV's lock (test suites run in parallel and
# may all ask) and, when VENV's stamp equals STAMP, prints its python and
# exits. Else creates VENV when missing and notes the start time.
venv_begin() {
  mkdir -p "$(dirname "$1")"
  exec 9>"$1.lock"
  flock 9
  if [ -x "$1/bin/python" ] && [ -f "$1/.trench-stamp" ] && [ "$(cat "$1/.trench-stamp")" = "$2" ]; then
    echo "$1/bin/python"
    exit 0
  fi
  venv_start=$(date +%s)
  if [ ! -x "$1/bin/python" ]; then
    echo "$tag: creating $1" >&2
    "$py" -m venv "$1" >&2
  fi
}

# venv_end VENV STAMP: writes the stamp and prints the python's path last.
venv_end() {
  echo "$2" > "$1/.trench-stamp"
  echo "$tag: ready in $(( $(date +%s) - venv_start )) s" >&2
  echo "$1/bin/python"
}

# The interpreter's version, part of every stamp.
venv_pyver() { "$py" -c 'import sys; print(sys.version.split()[0])'; }
