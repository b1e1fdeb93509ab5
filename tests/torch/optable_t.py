"""optable_t.py TRENCH: ops.def's t column against the torch translation
(adapters/torch/hlo_torch.py). Every op the generator makes is tried in
modules generated with that op alone (trench gen --ops OP): an op the
column claims must translate in at least one of them, an op it does not
claim must never translate (it is refused by name). Prints one line per
disagreement and "optable t: N ops claimed, M refused, K disagree"; exit
status 1 when any disagree."""
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(root, "adapters", "torch"))
import hlo_torch  # noqa: E402

trench = sys.argv[1]
rows = []
with open(os.path.join(root, "src", "ir", "ops.def")) as f:
    for line in f:
        m = re.match(r'X\(\w+,\s*"([a-z0-9-]+)".*"([a-z]*)"\)', line)
        if m:
            rows.append((m.group(1), m.group(2)))

claimed = refused = bad = 0
for name, modes in rows:
    if "g" not in modes:
        continue
    t = "t" in modes
    ok, msgs = 0, []
    for seed in range(1, 33):
        r = subprocess.run([trench, "gen", "--seed", str(seed), "--ops", name, "--size", "3"],
                           capture_output=True, text=True)
        if r.returncode != 0 or name not in r.stdout:
            continue
        try:
            hlo_torch.lower(r.stdout)
            ok += 1
        except hlo_torch.Unsupported as e:
            msgs.append(str(e))
        if t and ok:
            break
    if t:
        claimed += 1
        if not ok:
            bad += 1
            print("  %s claims column t but no generated module of it translates: %s"
                  % (name, msgs[0] if msgs else "none generated"))
    else:
        refused += 1
        if ok:
            bad += 1
            print("  %s translates in %d modules but column t does not claim it" % (name, ok))
        elif not any("'%s'" % name in m for m in msgs):
            bad += 1
            print("  %s (not in column t) is not refused by name: %s" % (name, msgs[:1]))
print("optable t: %d ops claimed, %d refused, %d disagree" % (claimed, refused, bad))
sys.exit(1 if bad else 0)
