#!/bin/bash
# export killed (SIGKILL, e.g. the OOM killer or a power cut) after it renamed its new files
# into place but before it deleted the old names: a second export reports success, "nothing
# to do", and leaves the old-named patch files in patches/ for good (the record that named
# them is overwritten). The kill point is made exact by killing the process from inside
# os.replace, after its 13th call (12 patch files + series).
. "$(dirname "$0")/common.sh" 4
base=$(git -C fork rev-parse HEAD~11)
# a new first commit: every patch is renumbered, i.e. renamed
GIT_SEQUENCE_EDITOR="sed -i '1i exec echo x >> transformer_engine/pytorch/ops/op.py \&\& git commit -qam \"[PyTorch] A new first commit\" -m Body. -m \"Signed-off-by: R <r@r.org>\"'" \
  git -C fork rebase -q -i "$base" 2>/dev/null
git -C fork notes --ref=te-series add -m new "$(git -C fork rev-parse HEAD~11)"
cat > "$W/killat.py" <<'PY'
import os, signal, sys
n = [0]; orig = os.replace
def rep(*a, **k):
    r = orig(*a, **k); n[0] += 1
    if n[0] == 13: os.kill(os.getpid(), signal.SIGKILL)
    return r
os.replace = rep
from te_series.cli import main
sys.exit(main(sys.argv[1:]))
PY
python3 "$W/killat.py" export >/dev/null 2>&1; echo "first export: rc=$? (killed)"
ts export | grep -v unchanged; echo "second export: rc=$?"
ls patches/*.patch | wc -l; grep -c '\.patch$' patches/series
echo "patch files not listed in series:"; for f in patches/*.patch; do grep -qx "$(basename $f)" patches/series || echo "  $f"; done
