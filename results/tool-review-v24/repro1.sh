#!/bin/bash
# Reword a patch with git's note rewriting off: export's advice (--drop) loses the
# hand-written note below '---' in that patch file (and renames the patch).
set -u
W=/tmp/repro1; rm -rf $W; mkdir -p $W/cache/dist
git clone -q /work/tool-try-v24 $W/proj
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $W/te
cp ~/.cache/te-series/dist/*.whl $W/cache/dist/
export TE_SERIES_CACHE=$W/cache HOME=$W/home; mkdir -p $HOME
git config --global user.name U; git config --global user.email u@u.org
PY=/tmp/tevenv/bin/python; [ -x $PY ] || PY=python3
ts() { (cd $W/proj && PYTHONPATH=$W/proj/src $PY -m te_series "$@"); }
cd $W/proj
P5=$(basename patches/0005-*.patch)
# a hand-written note below '---' (git am leaves it out of the commit; export promises to keep it)
python3 - "patches/$P5" <<'PY'
import sys; p=sys.argv[1]; b=open(p,'rb').read()
b=b.replace(b"\n---\n", b"\n---\nNOTE FOR REVIEWERS: keep me.\n\n", 1); open(p,'wb').write(b)
PY
git commit -qam "note in 0005"
ts apply --te-src $W/te >/dev/null 2>&1
# reword 0005 (5th of the 11 series commits) with git's note rewriting off
GIT_SEQUENCE_EDITOR="sed -i '5s/^pick/reword/'" GIT_EDITOR="sed -i '1s/\$/ (v2)/'" \
  git -C fork -c notes.rewrite.rebase=false -c notes.rewrite.amend=false rebase -q -i HEAD~11 >/dev/null 2>&1
echo "== export:"; ts export; echo "rc=$?"
echo "== following its advice: the git notes commands it prints"
ts export 2>&1 | sed -n 's/^  commit .*: \(git -C fork notes .*\)$/\1/p' > $W/notes.sh; cat $W/notes.sh
bash $W/notes.sh
echo "== export:"; ts export; echo "rc=$?"
echo "== following the advice: export --drop $P5"
ts export --drop "$P5"; echo "rc=$?"
echo "== is the note still anywhere in patches/?"
grep -rl "NOTE FOR REVIEWERS" patches/ || echo "LOST: the note is in no patch file"
git status --short
