#!/bin/bash
# (minor) a pr killed with SIGKILL leaves its whole throw-away TE clone (~100 MB) in $TMPDIR,
# once per killed run; nothing (status, the next pr) mentions or removes it.
source /work/tool-review-v32/common.sh
make_te_src
export TMPDIR=$T/tmp; mkdir -p $TMPDIR
# an upstream main that has #3410, so that pr runs (our mirror has none): 2.20.2's fuser.py
ts apply --te-src $T/te-src >/dev/null 2>&1
pre=$(git -C $T/proj/fork log --format=%H -1 --fixed-strings --grep 'Reduce Grouped MLP Fuser CPU Overhead (#3410)' --author upstream)
git -C $T/te-src checkout -q -b newmain
git -C $T/proj/fork show $pre:transformer_engine/pytorch/ops/fuser.py > $T/te-src/transformer_engine/pytorch/ops/fuser.py
git -C $T/te-src commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
git -C $T/te-src checkout -q --detach d0067d0da6cb01811b8072a7d304f0e00344ce2b
ts rebase --onto newmain --te-src $T/te-src >/dev/null 2>&1 && git -C $T/proj commit -qam rebased
for i in 1 2 3; do
  (cd $T/proj && exec python3 -m te_series pr --te-src $T/te-src >/dev/null 2>&1) & p=$!
  sleep 1.5; kill -9 $p 2>/dev/null; wait $p 2>/dev/null
done
echo "== left in TMPDIR after 3 killed runs:"; du -sh $TMPDIR/* 2>/dev/null
ts pr --te-src $T/te-src >/dev/null 2>&1; echo "next pr rc=$?"; echo "== still there:"; ls $TMPDIR
cleanup
