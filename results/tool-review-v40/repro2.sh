#!/bin/bash
# Export #1 (not committed yet) renames a patch that carries notes below '---'; an uncommitted
# comment in series then makes export #2's refusal call that renamed patch file "not what fork/
# was made from" and say to delete it. Done literally, export writes the patch without the notes.
cd /tmp && source /work/tool-review-v40/common.sh || exit 1
trap cleanup EXIT
cd $T/proj
P=patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
python3 - "$P" <<'PY'
import sys; p=sys.argv[1]; b=open(p,'rb').read(); i=b.index(b'\n---\n')+5
open(p,'wb').write(b[:i]+b'NOTE-BELOW: reviewer asked for a smaller example; v17 shrinks it\n'+b[i:])
PY
git commit -qam "note below --- in 0011"
ts apply --te-src $T/te-src >/dev/null 2>&1
# a new commit after 0001: every later patch is renumbered (export #1, not committed)
cd fork && BASE=$(git rev-parse HEAD~11)
GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/edit/'" git rebase -q -i $BASE >/dev/null 2>&1
sed -i '1a # a comment' qa/L0_pytorch_unittest/test.sh
git commit -qam "[PyTorch] Mark the L0 script

Signed-off-by: Tester <t@example.com>"
git rebase --continue >/dev/null 2>&1; cd ..
ts export >/dev/null 2>&1 && echo "export #1 done; notes now in: $(grep -l NOTE-BELOW patches/*.patch)"
# an uncommitted comment in series, and a reword of the last commit
sed -i 's/^# pr: fixes on main/# my comment\n&/' patches/series
(cd fork && git commit -q --amend -m "[Docs] Add a runnable MoE example of extra-tensor channels

Signed-off-by: Tester <t@example.com>")
echo "== export #2:"; ts export 2>&1
echo "== following it literally: commit series, delete the untracked file, export again"
git add patches/series && git commit -qm "series comment"
rm patches/0012-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
ts export 2>&1 | grep -v unchanged

echo "== its advice: git checkout -- patches/0012-..."
git checkout -- patches/0012-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch 2>&1
echo "== or remove the line, then export"
sed -i '/^0012-Docs-Add-a-runnable-mixture/d' patches/series
ts export 2>&1 | grep -v unchanged
echo "== files holding NOTE-BELOW now: $(grep -l NOTE-BELOW patches/*.patch || echo NONE)"
