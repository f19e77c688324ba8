#!/bin/bash
# Move the last PR's commit (moe-example) into the middle of PR 'in-place' in fork/.
# export's advice (move the '# pr:' line after 0004's line) silently moves 0005 out of
# PR 'in-place' into PR 'moe-example'; export writes it without a word; check then fails.
set -u
W=/tmp/repro3; rm -rf $W; mkdir -p $W/cache/dist
git clone -q /work/tool-try-v24 $W/proj
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $W/te
cp ~/.cache/te-series/dist/*.whl $W/cache/dist/
export TE_SERIES_CACHE=$W/cache HOME=$W/home; mkdir -p $HOME
git config --global user.name U; git config --global user.email u@u.org
PY=/tmp/tevenv/bin/python; [ -x $PY ] || PY=python3
ts() { (cd $W/proj && PYTHONPATH=$W/proj/src $PY -m te_series "$@"); }
cd $W/proj
ts apply --te-src $W/te >/dev/null 2>&1
# move the last commit (0011, PR moe-example) to just after 0004 (PR in-place, which has 0004 and 0005)
GIT_SEQUENCE_EDITOR="python3 -c \"import sys; p=sys.argv[1]; L=open(p).read().split('\n'); i=[k for k,l in enumerate(L) if l.startswith('pick')]; last=L.pop(i[-1]); L.insert(i[4],last); open(p,'w').write('\n'.join(L))\"" \
  git -C fork rebase -q -i HEAD~11 >/dev/null 2>&1
echo "== export:"; ts export; echo "rc=$?"
echo "== following the advice literally: move '# pr: moe-example on fixes' and its patch line right after 0004's line"
python3 - <<'PY'
p='patches/series'; L=open(p).read().split('\n')
i=L.index('# pr: moe-example on fixes'); blk=L[i:i+2]; del L[i:i+2]
j=L.index('0004-PyTorch-Keep-in-place-consumers-from-writing-into-ch.patch')
L[j+1:j+1]=blk; open(p,'w').write('\n'.join(L))
PY
git commit -qam "move moe-example group as export said"
echo "== export:"; ts export; echo "rc=$?"
echo "== series now (0006 = the old 0005, 'Keep in-place producers', is in PR moe-example, no longer in in-place):"
sed -n '/# pr: in-place/,/# pr: contract/p' patches/series
git commit -qam "export"
echo "== check (PR moe-example on fixes no longer applies):"
ts check --te-src $W/te 2>&1 | grep -E '^! PR|^check:'
