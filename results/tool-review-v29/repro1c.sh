#!/bin/bash
# Finding 1 (looping advice), case C: a colleague squashed 0005 into 0004 and exported --drop (later patches renumbered); fork/ has unexported work on 0007 and makes the same squash: export still refuses
. "$(dirname "$0")/common.sh"
edit_commit 'Route extra tensors' 'echo "# my own edit" >> transformer_engine/pytorch/ops/fuser.py && git commit -qa --amend --no-edit'
colleague "$T/col"
(cd "$T/col/fork" && GIT_SEQUENCE_EDITOR="sed -i '/Keep in-place producers/s/^pick/fixup/'" git rebase -q -i HEAD~11 >/dev/null 2>&1; git notes --ref=refs/notes/te-series show HEAD~6)
cts "$T/col" export --drop 0005-PyTorch-Keep-in-place-producers-from-writing-into-ch.patch | grep -v unchanged
(cd "$T/col" && git add -A patches && git -c user.name=C -c user.email=c@x.y commit -qm "squash 0005 into 0004")
git -C "$P" pull -q "$T/col" HEAD
echo "== export (1)"; ts export; echo "rc=$?"
(cd "$F" && GIT_SEQUENCE_EDITOR="sed -i '/Keep in-place producers/s/^pick/fixup/'" git rebase -q -i HEAD~11 >/dev/null 2>&1)
echo "notes:"; git -C "$F" notes --ref=refs/notes/te-series show HEAD~6
echo "== export (2) after same squash"; ts export; echo "rc=$?"
echo "== export --drop"; ts export --drop 0005-PyTorch-Keep-in-place-producers-from-writing-into-ch.patch; echo "rc=$?"
git -C $P status --short
echo "(delete $T when done)"
