#!/bin/bash
# Variant of repro3: the moe-example commit moved first in fork/. The advice "Move its
# '# pr:' line ... above the first patch line" done literally (just above 0001's line) gets
# the next advice: remove PR 'fixes' and delete patches/pr/fixes.md.
set -u
W=/tmp/repro3b; rm -rf $W; mkdir -p $W/cache/dist
git clone -q /work/tool-try-v24 $W/proj
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $W/te
cp ~/.cache/te-series/dist/*.whl $W/cache/dist/
export TE_SERIES_CACHE=$W/cache HOME=$W/home; mkdir -p $HOME
git config --global user.name U; git config --global user.email u@u.org
PY=/tmp/tevenv/bin/python; [ -x $PY ] || PY=python3
ts() { (cd $W/proj && PYTHONPATH=$W/proj/src $PY -m te_series "$@"); }
cd $W/proj
ts apply --te-src $W/te >/dev/null 2>&1
GIT_SEQUENCE_EDITOR="python3 -c \"import sys; p=sys.argv[1]; L=open(p).read().split('\n'); i=[k for k,l in enumerate(L) if l.startswith('pick')]; last=L.pop(i[-1]); L.insert(i[0],last); open(p,'w').write('\n'.join(L))\"" \
  git -C fork rebase -q -i HEAD~11 >/dev/null 2>&1
echo "== export:"; ts export; echo "rc=$?"
python3 - <<'PY'
p='patches/series'; L=open(p).read().split('\n')
i=L.index('# pr: moe-example on fixes'); blk=L[i:i+2]; del L[i:i+2]
j=L.index('0001-PyTorch-Flag-channel-tensors-as-requiring-grad-witho.patch')
L[j:j]=blk; open(p,'w').write('\n'.join(L))
PY
git commit -qam "moved as export said"
sed -n '/# pr: fixes/,/0002/p' patches/series
echo "== export:"; ts export; echo "rc=$?"
