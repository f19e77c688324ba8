#!/bin/bash
# Finding 2: a colleague renames a patch (rewords its subject); "make the same change in fork/"
# (the same reword) cannot get past "patches/series (its list of patches) changed since ...".
. "$(dirname "$0")/common.sh"
# 1. unexported work of the user on another patch (0007)
edit_commit 'Route extra tensors' 'echo "# u" >> transformer_engine/pytorch/ops/fuser.py && git commit -qa --amend --no-edit'
# 2. a colleague rewords 0004's subject with te-series (export renames the file), commits; the user pulls
git clone -q "$P" "$T/col"
(cd "$T/col" && PYTHONPATH="$T/col/src" python3 -m te_series apply --te-src "$T/te-src" >/dev/null 2>&1
 cd fork && GIT_SEQUENCE_EDITOR="sed -i '/Keep in-place consumers/s/^pick/reword/'" \
   GIT_EDITOR="sed -i '1s/.*/[PyTorch] Keep in-place consumers out of channel tensors/'" git rebase -q -i HEAD~11 >/dev/null 2>&1
 cd .. && PYTHONPATH="$T/col/src" python3 -m te_series export | grep rename
 git add -A patches && git -c user.name=C -c user.email=c@x.y commit -qm "reword 0004")
git -C "$P" pull -q "$T/col" HEAD
echo "== export (1)"; ts export; echo "rc=$?"
# 3. follow the advice: make the same change in fork/ (the same reword)
(cd "$F" && GIT_SEQUENCE_EDITOR="sed -i '/Keep in-place consumers/s/^pick/reword/'" \
   GIT_EDITOR="sed -i '1s/.*/[PyTorch] Keep in-place consumers out of channel tensors/'" git rebase -q -i HEAD~11 >/dev/null 2>&1)
git -C "$F" log --format=%s -1 ":/Keep in-place consumers"
echo "== export --dry-run (2)"; ts export --dry-run; echo "rc=$?"
echo "== export (2), after the same reword in fork/"; ts export; echo "rc=$?"
