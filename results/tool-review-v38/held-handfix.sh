#!/bin/bash
# a patch that does not apply (no conflict markers); follow the advice: make the change by hand, commit, apply --continue, export
cd "$(dirname "$0")"; source ./common.sh
cd $T/proj
P=patches/0005-PyTorch-Keep-in-place-producers-from-writing-into-ch.patch
cp $P $T/orig.patch
python3 - $P <<'PY'
import sys; p=sys.argv[1]; s=open(p).read()
s=s.replace("\n---\n docs/","\n---\nNOTE OF MINE: keep me.\n\n docs/",1)
s=s.replace("-        elif self._in_place:\n","-        elif self._in_place:  # BROKEN\n",1)
s=s+"TRAILING TEXT OF MINE after the last file's hunks.\n"
open(p,'w').write(s)
PY
git commit -qam "hand-edited 0005 (broken)"
ts apply --te-src $T/te-src 2>&1 | grep -v '^\[te-series'
echo "=== make the change by hand and commit it"
cd $T/proj/fork* 2>/dev/null; cd $T/proj; W=fork; [ -d fork.new ] && W=fork.new; echo "work tree: $W"
git -C $W apply $T/orig.patch && git -C $W add -A && git -C $W commit -q -s -m "[PyTorch] Keep in-place producers from writing into channel grads" -m "Body written by hand."
ts apply --continue 2>&1 | grep -v '^\[te-series'
echo "=== export"
ts export; echo rc=$?
grep -c "NOTE OF MINE\|TRAILING TEXT OF MINE" $P
git diff --stat
cleanup
