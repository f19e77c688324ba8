#!/bin/bash
# Finding 4 (minor): after pulling a colleague's rename, `export --dry-run` shows no plan (only the
# generic "patches/series (its list of patches) changed" error), though status sends the user there
# ("te-series export --dry-run says how to go on") and README says --dry-run shows the plan when the
# only refusals are about files in patches/.
. "$(dirname "$0")/common.sh"
colleague "$T/col"
RW="GIT_SEQUENCE_EDITOR=\"sed -i '/Keep in-place consumers/s/^pick/reword/'\" GIT_EDITOR=\"sed -i '1s/.*/[PyTorch] Keep in-place consumers out of channel tensors/'\" git rebase -q -i HEAD~11 >/dev/null 2>&1"
(cd "$T/col/fork" && eval "$RW"); cts "$T/col" export >/dev/null
(cd "$T/col" && git add -A patches && git -c user.name=C -c user.email=c@x.y commit -qm "reword 0004")
git -C "$P" pull -q "$T/col" HEAD
echo "== status"; ts status
echo "== export --dry-run"; ts export --dry-run; echo "rc=$?"
echo "(delete $T when done)"
