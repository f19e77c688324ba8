#!/bin/bash
# rebase's refusals of a dirty fork/ end with "then export again" (export's wording),
# not "then run the rebase again".
set -u
W=/tmp/repro4; rm -rf $W; mkdir -p $W/cache/dist
git clone -q /work/tool-try-v24 $W/proj
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $W/te
cp ~/.cache/te-series/dist/*.whl $W/cache/dist/
export TE_SERIES_CACHE=$W/cache HOME=$W/home; mkdir -p $HOME
git config --global user.name U; git config --global user.email u@u.org
PY=/tmp/tevenv/bin/python; [ -x $PY ] || PY=python3
ts() { (cd $W/proj && PYTHONPATH=$W/proj/src $PY -m te_series "$@"); }
git -C $W/te checkout -q -b up2 d0067d0da6cb01811b8072a7d304f0e00344ce2b
echo "# upstream" >> $W/te/README.rst; git -C $W/te commit -qam "upstream neutral"
cd $W/proj
ts apply --te-src $W/te >/dev/null 2>&1
echo wip >> fork/README.rst
echo draft > fork/draft.txt
ts rebase --onto up2 --te-src $W/te; echo "rc=$?"
git -C fork stash -q -u
ts rebase --onto up2 --te-src $W/te >/dev/null 2>&1; echo "after stashing, rebase rc=$?"
