#!/bin/bash
# A note after a file's hunks, added to a patch file after apply (text export keeps), blocks
# export with "rebuild fork/" advice once fork/ splits that file's change off the commit.
cd /tmp && source /work/tool-review-v40/common.sh || exit 1
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
P=patches/0001-PyTorch-Flag-channel-tensors-as-requiring-grad-witho.patch
python3 - "$P" <<'PY'
import sys; p=sys.argv[1]; b=open(p,'rb').read(); i=b.index(b'diff --git a/tests/')
open(p,'wb').write(b[:i]+b'NOTE-DOCS: my note about the docs hunk\n'+b[i:])
PY
git add patches && git commit -qm "note after the docs hunk of 0001"
echo "== export --dry-run right after the note (fork/ unchanged):"; ts export --dry-run 2>&1 | sed -n 2p
# split the docs change of 0001 into a commit of its own, right after it
cd fork && BASE=$(git rev-parse HEAD~11)
GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/edit/'" git rebase -q -i $BASE >/dev/null 2>&1
git reset -q HEAD^ -- docs/examples/op_fuser/op_fuser.rst && git commit -q --amend --no-edit
git commit -qam "[PyTorch] Docs part of the flag change

Signed-off-by: Tester <t@example.com>"
git rebase --continue >/dev/null 2>&1; cd ..
echo "== export:"; ts export 2>&1 | tail -3
echo "== the same, with the note committed BEFORE apply (fork/ made from it):"
ts apply --force --te-src $T/te-src >/dev/null 2>&1
cd fork && BASE=$(git rev-parse HEAD~11)
GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/edit/'" git rebase -q -i $BASE >/dev/null 2>&1
git reset -q HEAD^ -- docs/examples/op_fuser/op_fuser.rst && git commit -q --amend --no-edit
git commit -qam "[PyTorch] Docs part of the flag change

Signed-off-by: Tester <t@example.com>"
git rebase --continue >/dev/null 2>&1; cd ..
ts export 2>&1 | grep -v 'rename\|unchanged'; grep -l NOTE-DOCS patches/*.patch
