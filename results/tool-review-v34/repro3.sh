#!/bin/bash
# A commit whose te-series note names another (or no existing) patch is not recognised
# by its subject, as a commit with no note is: export says "fork/ holds no commit of its own"
# for 0004 and advises --drop; following it moves 0004 out of PR 'in-place' into PR
# 'standalone-lock' (series regrouped) and loses 0004's notes text, instead of naming the `git notes` fix.
. "$(dirname "$0")/common.sh"
mk_te_src
cd $T/proj
python3 - patches/0004-PyTorch-Keep-in-place-consumers-from-writing-into-ch.patch <<'PY'
import sys; p=sys.argv[1]; s=open(p).read()
open(p,'w').write(s.replace('\n---\n','\n---\nNOTE-FOR-0004: reviewers, see the consumers thread.\n\n',1))
PY
git commit -qam "0004: a note for reviewers below ---"
ts apply --te-src $T/te-src >/dev/null 2>&1
P3=0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch
P4=0004-PyTorch-Keep-in-place-consumers-from-writing-into-ch.patch
c4=$(git -C fork log --format=%h --grep='Keep in-place consumers' -1)
git -C fork notes --ref=te-series add -f -m "$P3" $c4 2>/dev/null   # wrong note (a copy of 0003's)
echo "--- export:"; ts export
echo "--- following its advice: export --drop $P4"; ts export --drop $P4 | grep -v unchanged
git diff patches/series
echo "--- the 0004 notes text below --- is gone:"; grep -c NOTE-FOR-0004 patches/$P4
echo "--- compare: the same commit with NO note gets the right advice:"
git checkout -q patches; git -C fork notes --ref=te-series remove $c4 2>/dev/null; ts export
cleanup
