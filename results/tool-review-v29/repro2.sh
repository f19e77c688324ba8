#!/bin/bash
# Finding 2 (looping advice): after a colleague's rename (reword of 0008) and the same reword in fork/, te-series rebase onto a clean upstream claims 0008's commit was dropped; --abort + rebase again and --continue --drop loop
. "$(dirname "$0")/common.sh"
git -C "$T/te-src" checkout -q -b up-clean $BASE
sed -i '1a # upstream moved on' "$T/te-src/transformer_engine/pytorch/ops/op.py"
git -C "$T/te-src" commit -qam "upstream: a comment in op.py"; git -C "$T/te-src" checkout -q $BASE
colleague "$T/col"
RW="GIT_SEQUENCE_EDITOR=\"sed -i '/Stop the fuser/s/^pick/reword/'\" GIT_EDITOR=\"sed -i '1s/.*/[PyTorch] Stop the backward pass of the fuser at the boundary/'\" git rebase -q -i HEAD~11 >/dev/null 2>&1"
(cd "$T/col/fork" && eval "$RW")
cts "$T/col" export | grep rename
(cd "$T/col" && git add -A patches && git -c user.name=C -c user.email=c@x.y commit -qm "reword 0008")
git -C "$P" pull -q "$T/col" HEAD
echo "== rebase (1)"; ts rebase --onto up-clean --te-src "$T/te-src"; echo "rc=$?"
(cd "$F" && eval "$RW"); git -C "$F" log --format=%s -1 ":/Stop the"
echo "== rebase (2) after the same reword"; ts rebase --onto up-clean --te-src "$T/te-src"; echo "rc=$?"
echo "== status"; ts status
echo "== rebase --continue"; ts rebase --continue; echo "rc=$?"
N=0008-PyTorch-Stop-the-backward-pass-of-the-fuser-at-the-b.patch
echo "== rebase --continue --drop"; ts rebase --continue --drop $N; echo "rc=$?"
git -C $P status --short; git -C "$F" log --oneline -3
echo "== rebase --abort"; ts rebase --abort; echo "rc=$?"
echo "== rebase again after --abort, as the stop advises"; ts rebase --onto up-clean --te-src "$T/te-src"; echo "rc=$?"
ts rebase --abort >/dev/null
echo "== the way out nobody names: export first"; ts export | grep -v unchanged; echo "rc=$?"
echo "== rebase (3) after export"; ts rebase --onto up-clean --te-src "$T/te-src" | grep -v unchanged; echo "rc=$?"
echo "(delete $T when done)"
