#!/bin/bash
# apply stops; user edits series (drops the stopped patch's line), then --continue / --skip
cd "$(dirname "$0")"; source ./common.sh
cd $T/proj
P=patches/0005-PyTorch-Keep-in-place-producers-from-writing-into-ch.patch
python3 - $P <<'PY'
import sys; p=sys.argv[1]; s=open(p).read()
s=s.replace("-        elif self._in_place:\n","-        elif self._in_place:  # BROKEN\n",1)
open(p,'w').write(s)
PY
git commit -qam "hand-edited 0005 (broken)"
ts apply --te-src $T/te-src >/dev/null 2>&1
sed -i '/^0005-/d' patches/series
echo "=== apply --continue"
ts apply --continue 2>&1 | grep -v '^\[te-series'
echo "=== apply --continue --skip"
ts apply --continue --skip 2>&1 | grep -v '^\[te-series'
ts status
cleanup
