#!/bin/bash
# A note written after a file's hunks is silently dropped by export once the commit no
# longer touches that file (here: patch 0003's op.py change is taken out in fork/).
T=/tmp/try37-repro2-$$
source "$(dirname "$0")/common.sh" >/dev/null 2>&1
cd $T/proj
P=$(ls patches/0003-*.patch)
python3 - $P <<'PY'
import sys
p = sys.argv[1]; b = open(p, 'rb').read()
i = b.index(b"diff --git a/transformer_engine/pytorch/ops/sequential.py")
b = b[:i] + b"MY NOTE AFTER op.py HUNKS: keep me\n" + b[i:]
open(p, 'wb').write(b)
PY
git commit -qam "note after op.py's hunks in 0003"
ts apply --te-src $T/te-src >/dev/null 2>&1
cd fork
C=$(git log --format=%H --grep='Do not lock channel' -1)
GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/edit/'" git rebase -q -i $C~1 >/dev/null 2>&1
git checkout HEAD~1 -- transformer_engine/pytorch/ops/op.py   # take op.py out of 0003
git commit -q --amend --no-edit
git rebase --continue >/dev/null 2>&1
ts export --dry-run | grep -v unchanged
ts export | grep -v unchanged; echo "rc=$?"
echo "note lines in 0003 now: $(grep -c 'MY NOTE' $T/proj/$P)  (was 1)"
cleanup
