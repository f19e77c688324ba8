#!/bin/bash
# Notes added by hand (uncommitted) to a patch; the patch reworded in fork/ meanwhile.
# export refuses and advises "commit them and rebuild fork/" -- followed literally, the rebuild
# pushes the unexported reword out of fork/, though "commit, export again" alone works (see repro1b).
cd "$(dirname "$0")"; source ./common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
P=patches/0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch
python3 - $P <<'PY'
import sys; p=sys.argv[1]; s=open(p).read()
s=s.replace("\n---\n","\n---\nv17: NOTE OF MINE below the line.\n",1)
open(p,'w').write(s)
PY
cd fork
C=$(git log --format=%H --grep='Do not lock channel' -1)
GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/reword/'" GIT_EDITOR="sed -i '1s/.*/[PyTorch] Leave channel bindings unlocked in standalone calls/'" git rebase -q -i $C~1 >/dev/null
cd ..
echo "=== export"
ts export; echo rc=$?
if [ "${SIMPLE:-0}" = 1 ]; then
  echo "=== commit only, export again"
  git add $P && git commit -qm "notes"
  ts export | grep -v unchanged; echo rc=$?
else
  echo "=== follow the advice: commit, rebuild, export again"
  git add $P && git commit -qm "notes"
  ts apply --force --te-src $T/te-src 2>&1 | grep -v '^\[te-series'
  ts export | grep -v unchanged; echo rc=$?
fi
echo "=== fork/ subject of patch 3:"; git -C fork log --format=%s -9 | tail -1
ls patches | grep 0003
cleanup
