#!/bin/bash
# Finding 3: on a full disk, a failing `git notes` (export's and apply's) gives git's raw error with no
# advice; for apply --force it names fork.new/, which the tool has already deleted.
# Uses failer.py: the Nth writing step fails as on a full disk (a git that writes returns rc 128 with
# "No space left on device"; os/Path writes raise ENOSPC). Step numbers found with FAIL_LOG.
. "$(dirname "$0")/common.sh"
FAILER=$(dirname "$(readlink -f "$0")")/failer.py
# export: a reworded patch (a rename) and a new commit, so export writes notes
(cd "$F" && GIT_SEQUENCE_EDITOR="sed -i '/Keep in-place consumers/s/^pick/reword/'" \
  GIT_EDITOR="sed -i '1s/.*/[PyTorch] Keep in-place consumers out of channel tensors/'" git rebase -q -i HEAD~11 >/dev/null 2>&1)
cp -a "$P" "$T/probe"   # find the step on a copy
(cd "$T/probe" && PYTHONPATH="$T/probe/src" FAIL_LOG=$T/log1 FAIL_AT=99999 python3 "$FAILER" export >/dev/null 2>&1)
N=$(grep -m1 ' git notes' $T/log1 | cut -d' ' -f1); rm -rf "$T/probe"
echo "== export with the disk full at step $N (git notes add)"
(cd "$P" && FAIL_AT=$N python3 "$FAILER" export); echo "rc=$?"
# apply --force: the note of an applied patch cannot be written
rm -f $T/log2; (cd "$P" && FAIL_LOG=$T/log2 FAIL_AT=99999 python3 "$FAILER" apply --force --te-src "$T/te-src" >/dev/null 2>&1)
N2=$(grep ' git notes' $T/log2 | tail -1 | cut -d' ' -f1)
echo "== apply --force with the disk full at step $N2 (git notes add of the last patch)"
(cd "$P" && FAIL_AT=$N2 python3 "$FAILER" apply --force --te-src "$T/te-src" 2>&1 | grep -v "^\[te-series"; echo "rc=${PIPESTATUS[0]}")
ls -d "$P"/fork*
