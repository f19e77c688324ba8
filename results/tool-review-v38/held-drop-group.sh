#!/bin/bash
# squash the only patch of PR 'standalone-lock' into the one before it, export --drop it; follow the advice
cd "$(dirname "$0")"; source ./common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj/fork
A=$(git log --format=%H --grep='Test channel routing through' -1)
cat > $T/seq.py <<'PY'
import sys
p=sys.argv[1]; L=[l for l in open(p).read().split('\n') if l.startswith('pick')]
L[1]='squash'+L[1][4:]
open(p,'w').write('\n'.join(L)+'\n')
PY
GIT_SEQUENCE_EDITOR="python3 $T/seq.py" GIT_EDITOR=true git rebase -q -i $A~1
git log --oneline -3 | cat
echo "=== export --drop 0003"
ts export --drop 0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch; echo rc=$?
echo "=== follow the advice"
cd $T/proj
sed -i '/^# pr: standalone-lock on fixes$/d; s/^# pr: in-place on standalone-lock$/# pr: in-place on fixes/' patches/series
git rm -q patches/pr/standalone-lock.md
git commit -qam "empty standalone-lock"
ts export --drop 0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch; echo rc=$?
git status --short
git diff HEAD --stat | tail -3
cleanup
