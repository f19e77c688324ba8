#!/bin/bash
# Finding 1 (looping advice), case B: a colleague inserted a new patch (all later patches renumbered); fork/ has unexported work on 0007, makes the same insertion and notes it as advised: export still refuses
. "$(dirname "$0")/common.sh"
edit_commit 'Route extra tensors' 'echo "# my own edit" >> transformer_engine/pytorch/ops/fuser.py && git commit -qa --amend --no-edit'
colleague "$T/col"
(cd "$T/col/fork" && GIT_SEQUENCE_EDITOR="sed -i '/Test channel routing/a exec echo colleague >> README.rst \&\& git commit -qa -s -m \"[PyTorch] Note the colleague change\" -m \"Body.\"'" git rebase -q -i HEAD~11 >/dev/null 2>&1; git log --oneline -4 HEAD~8)
cts "$T/col" export | grep -v unchanged
(cd "$T/col" && git add -A patches && git -c user.name=C -c user.email=c@x.y commit -qm "new patch 0003")
git -C "$P" pull -q "$T/col" HEAD
NEW=$(ls $P/patches/0003-*Note*)
echo "== export (1)"; ts export; echo "rc=$?"
(cd "$F" && GIT_SEQUENCE_EDITOR="sed -i '/Test channel routing/a exec git am -q --keep-non-patch --keep-cr $NEW'" git rebase -q -i HEAD~11 >/dev/null 2>&1; git log --oneline -4 HEAD~8)
echo "== export (2) after same insertion"; ts export; echo "rc=$?"
C=$(git -C "$F" log --format=%h -1 ":/Note the colleague")
git -C "$F" notes --ref=te-series add -f -m 0003-PyTorch-Note-the-colleague-change.patch $C
echo "== export (3) after note"; ts export; echo "rc=$?"
git -C $P status --short
echo "(delete $T when done)"
