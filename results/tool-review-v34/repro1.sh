#!/bin/bash
# Two commits' te-series notes swapped (e.g. `git notes copy`/`add -f` on the wrong
# commit): export takes it as two renames and moves patch 0004's "below ---" notes text
# into patch 0005's file; 0004's notes are gone from 0004. No refusal, though each commit's
# subject names the other patch.
. "$(dirname "$0")/common.sh"
mk_te_src
cd $T/proj
P4=patches/0004-PyTorch-Keep-in-place-consumers-from-writing-into-ch.patch
P5=patches/0005-PyTorch-Keep-in-place-producers-from-writing-into-ch.patch
python3 - "$P4" <<'PY'
import sys; p=sys.argv[1]; s=open(p).read()
open(p,'w').write(s.replace('\n---\n','\n---\nNOTE-FOR-0004: reviewers, see the consumers thread.\n\n',1))
PY
git commit -qam "0004: a note for reviewers below ---"
ts apply --te-src $T/te-src >/dev/null 2>&1
c4=$(git -C fork log --format=%h --grep='Keep in-place consumers' -1)
c5=$(git -C fork log --format=%h --grep='Keep in-place producers' -1)
git -C fork notes --ref=te-series add -f -m "${P5#patches/}" $c4 2>/dev/null
git -C fork notes --ref=te-series add -f -m "${P4#patches/}" $c5 2>/dev/null
ts export | grep -v unchanged
echo "--- files holding the note now:"; grep -l NOTE-FOR-0004 patches/*.patch
echo "--- git diff --stat:"; git diff --stat
cleanup
