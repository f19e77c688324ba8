#!/bin/bash
# (minor) squash 0002 into 0001, export --drop 0002 as advised: 0002's text below '---' is deleted
# with its file, though export knows it was squashed into 0001's commit; nothing says so.
T=/tmp/try36-r3-$$; source /work/tool-review-v36/common.sh; trap cleanup EXIT
cd $T/proj && F=$(ls patches/0002*)
python3 -c "import sys;p=sys.argv[1];b=open(p,'rb').read();i=b.index(b'\n---\n')+5;open(p,'wb').write(b[:i]+b'NOTE-0002: my review text\n\n'+b[i:])" $F
git commit -qam "note in 0002"
ts apply --te-src $T/te-src >/dev/null 2>&1
cd fork && GIT_SEQUENCE_EDITOR="sed -i '2s/^pick/squash/'" GIT_EDITOR=true git rebase -q -i HEAD~11
cd $T/proj && ts export 2>&1 | cut -c1-200
ts export --drop $(basename $F) | grep -v rename
grep -l NOTE-0002 patches/* || echo "NOTE-0002 is in no patch file"
