#!/bin/bash
# A hand-written mail header above 'Subject:' is moved below it by an export of an
# unedited fork/: an untouched patch file is rewritten.
set -u
W=/tmp/repro2; rm -rf $W; mkdir -p $W/cache/dist
git clone -q /work/tool-try-v24 $W/proj
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $W/te
cp ~/.cache/te-series/dist/*.whl $W/cache/dist/
export TE_SERIES_CACHE=$W/cache HOME=$W/home; mkdir -p $HOME
git config --global user.name U; git config --global user.email u@u.org
PY=/tmp/tevenv/bin/python; [ -x $PY ] || PY=python3
ts() { (cd $W/proj && PYTHONPATH=$W/proj/src $PY -m te_series "$@"); }
cd $W/proj
P3=$(ls patches/0003-*.patch)
python3 - $P3 <<'PY'
import sys; p=sys.argv[1]; b=open(p,'rb').read()
b=b.replace(b"\nSubject:", b"\nX-Review-Note: header of mine\nSubject:",1); open(p,'wb').write(b)
PY
git commit -qam "a hand-written header in 0003"
ts apply --te-src $W/te >/dev/null 2>&1
echo "== export, nothing edited in fork/:"
ts export | grep -v unchanged
git diff
