#!/bin/bash
# Finding 1 (looping advice), case A: a colleague's export renamed 0004 (reword); fork/ has its own unexported change to 0004 and makes the same reword: export still refuses
. "$(dirname "$0")/common.sh"
edit_commit 'Keep in-place consumers' 'echo "# my own edit" >> transformer_engine/pytorch/ops/fuser.py && git commit -qa --amend --no-edit'
colleague "$T/col"
(cd "$T/col/fork" && GIT_SEQUENCE_EDITOR="sed -i '/Keep in-place consumers/s/^pick/reword/'" \
   GIT_EDITOR="sed -i '1s/.*/[PyTorch] Keep in-place consumers out of channel tensors/'" git rebase -q -i HEAD~11 >/dev/null 2>&1)
cts "$T/col" export | grep -v unchanged
(cd "$T/col" && git add -A patches && git -c user.name=C -c user.email=c@x.y commit -qm "reword 0004")
git -C "$P" pull -q "$T/col" HEAD
echo "== export (1)"; ts export; echo "rc=$?"
(cd "$F" && GIT_SEQUENCE_EDITOR="sed -i '/Keep in-place consumers/s/^pick/reword/'" \
   GIT_EDITOR="sed -i '1s/.*/[PyTorch] Keep in-place consumers out of channel tensors/'" git rebase -q -i HEAD~11 >/dev/null 2>&1)
git -C "$F" log --format=%s -1 ":/Keep in-place consumers"
echo "== export (2) after same reword"; ts export; echo "rc=$?"
git -C $P status --short
echo "(delete $T when done)"
