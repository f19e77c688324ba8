#!/bin/bash
# Drop patch 0003 in fork/, reword 0004 to 0003's subject, export --drop 0003.
# drop patch 0003 in fork/, reword 0004 to 0003's subject, export --drop 0003: whose notes does the new 0003 file carry?
cd "$(dirname "$0")"; source ./common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
for n in 0003 0004; do
  P=$(ls patches/$n-*.patch)
  sed -i "0,/^---\$/s//---\nNOTE OF $n/" $P
done
git commit -qam "notes"
ts apply --force --te-src $T/te-src >/dev/null 2>&1; rm -rf .te-series-backup
cd fork
C=$(git log --format=%H --grep='Do not lock channel' -1)
cat > $T/seq.py <<'PY'
import sys
p=sys.argv[1]; L=[l for l in open(p).read().split('\n') if l.startswith('pick')]
L[0]='drop'+L[0][4:]; L[1]='reword'+L[1][4:]
open(p,'w').write('\n'.join(L)+'\n')
PY
GIT_SEQUENCE_EDITOR="python3 $T/seq.py" GIT_EDITOR="sed -i '1s/.*/[PyTorch] Do not lock channel bindings in standalone calls/'" git rebase -q -i $C~1 >/dev/null 2>&1 || { echo "rebase stopped"; git status | head -5; }
git log --format='%h %s' -10 | cat
cd ..
echo "=== export --drop 0003"; ts export --drop 0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch 2>&1 | grep -v unchanged; echo rc=$?
grep -H "NOTE OF" patches/*.patch
git status --short
echo "=== follow the advice: rebuild, export again"
ts apply --force --te-src $T/te-src 2>&1 | grep -v '^\[te-series' | cut -c1-120
ts export --drop 0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch 2>&1 | grep -v unchanged
ts export 2>&1 | grep -v unchanged
git -C fork log --format='%h %s' -10 | tail -3
cleanup
