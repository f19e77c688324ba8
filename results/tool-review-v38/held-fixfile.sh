#!/bin/bash
# a patch that does not apply; fix the patch file (restore), then apply --continue as advised
cd "$(dirname "$0")"; source ./common.sh
cd $T/proj
P=patches/0005-PyTorch-Keep-in-place-producers-from-writing-into-ch.patch
cp $P $T/orig.patch
python3 - $P <<'PY'
import sys; p=sys.argv[1]; s=open(p).read()
s=s.replace("-        elif self._in_place:\n","-        elif self._in_place:  # BROKEN\n",1)
open(p,'w').write(s)
PY
git commit -qam "hand-edited 0005 (broken)"
ts apply --te-src $T/te-src 2>&1 | grep -v '^\[te-series' | tail -2
echo "=== fix the patch file, apply --continue"
cp $T/orig.patch $P
ts apply --continue 2>&1 | grep -v '^\[te-series'
echo "=== follow: git -C fork am --abort; apply --continue"
git -C fork am --abort
ts apply --continue 2>&1 | grep -v '^\[te-series'
ts status
echo "=== export"
ts export --dry-run 2>&1 | grep -v unchanged; echo rc=$?
cleanup
