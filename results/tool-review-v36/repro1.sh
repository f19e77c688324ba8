#!/bin/bash
# Notes added to a freshly exported (not yet committed) patch file, then a reorder in fork/:
# export refuses "changed since fork/ was made" (the record's blob was never stored in git),
# though the change is notes-only text export keeps; "make the same change in fork/" cannot work.
T=/tmp/try36-r1-$$; source /work/tool-review-v36/common.sh; trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj/fork
echo "# tweak" >> docs/examples/op_fuser/moe_channels.py && git commit -qa --amend --no-edit   # amend 0011
ts export | grep -v unchanged
F=$(ls $T/proj/patches/0011*)
python3 -c "import sys;p=sys.argv[1];b=open(p,'rb').read();i=b.index(b'\n---\n')+5;open(p,'wb').write(b[:i]+b'MY NOTE for the docs patch\n\n'+b[i:])" $F
cd $T/proj && git add patches && git commit -qm "export + my notes"
# reorder the last two commits (docs before retain_graph)
cd fork && GIT_SEQUENCE_EDITOR="sed -i '1{h;d};2{G}'" git rebase -q -i HEAD~2
cd $T/proj && python3 - <<'PY'
s=open('patches/series').read().split('\n')
i=s.index('# pr: retain-graph on step-spans'); blk=s[i:i+2]; del s[i:i+2]
j=s.index('0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch'); s[j+1:j+1]=blk
open('patches/series','w').write('\n'.join(s))
PY
git commit -qam "move group (as export's advice says)"
echo "--- export after reorder:"; ts export
echo "--- the change 'since' is only my note:"; git diff HEAD~1 HEAD~2 --stat 2>/dev/null | tail -1
git log --format=%h -1 -- patches/0011*; git cat-file -t "$(python3 -c 'print()')" 2>/dev/null
