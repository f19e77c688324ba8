#!/bin/bash
# Finding 1: "make the same change in fork/" cannot get past "changed since fork/ was made from it"
# when fork/ also has unexported work on the same patch.
. "$(dirname "$0")/common.sh"
# 1. the user amends patch 0003's code in fork/ (not exported yet)
edit_commit 'Do not lock channel' 'echo "# user edit" >> transformer_engine/pytorch/ops/fuser.py && git commit -q -a --amend --no-edit'
# 2. a colleague adds a paragraph to 0003's message in patches/; the user pulls it
git clone -q "$P" "$T/colleague"
python3 - "$T/colleague" <<'PY'
import glob,sys;p=glob.glob(sys.argv[1]+'/patches/0003-*.patch')[0];s=open(p).read()
i=s.index('\n\n',s.index('Subject:'))+2; open(p,'w').write(s[:i]+'Colleague wrote this paragraph.\n\n'+s[i:])
PY
git -C "$T/colleague" commit -qam "reword 0003 body"
git -C "$P" pull -q "$T/colleague" HEAD
echo "== export (1)"; ts export; echo "rc=$?"
# 3. follow the advice's second way: make the same change in fork/ (the same paragraph in 0003's message)
edit_commit 'Do not lock channel' 'python3 - <<PY
import subprocess
m=subprocess.check_output(["git","log","-1","--format=%B"]).decode()
s,rest=m.split("\n\n",1)
subprocess.check_call(["git","commit","-q","--amend","-m",s+"\n\nColleague wrote this paragraph.\n\n"+rest])
PY'
git -C "$F" log -1 --format=%B ":/Do not lock channel" | head -4
echo "== export (2), after making the same change in fork/"; ts export; echo "rc=$?"
