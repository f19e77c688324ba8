#!/bin/bash
# Finding 3 (looping advice): a colleague rewords line 11 of 0003's message, fork/ (unexported) rewords line 12; after making the colleague's change in fork/ too, export still refuses (git merge-file conflicts on adjacent lines)
. "$(dirname "$0")/common.sh"
# my unexported change: a new line after "longer be bound into a Sequential. ..." line of 0003's message
MSGED='python3 - <<PY
import subprocess,os
m=subprocess.check_output(["git","log","-1","--format=%B"]).decode()
for a,b in eval(os.environ["SUBS"]): assert a in m; m=m.replace(a,b,1)
subprocess.check_call(["git","commit","-q","--amend","-m",m])
PY'
SUBS='[("longer be bound into a Sequential. The docs","longer be bound into a te.ops.Sequential. The docs")]' edit_commit 'Do not lock channel' "$MSGED"
git clone -q "$P" "$T/col"
sed -i 's/^an op that was called on its own, e.g. to test or warm it up, could no$/an op that was called on its own (e.g. to test or warm it up) could no/' "$T/col"/patches/0003-*.patch
git -C "$T/col" commit -qam "0003: wording"; git -C "$T/col" show --stat HEAD | tail -2
git -C "$P" pull -q "$T/col" HEAD
echo "== export (1)"; ts export; echo "rc=$?"
SUBS='[("an op that was called on its own, e.g. to test or warm it up, could no","an op that was called on its own (e.g. to test or warm it up) could no")]' edit_commit 'Do not lock channel' "$MSGED"
git -C "$F" log -1 --format=%B ":/Do not lock channel" | sed -n 5,9p
echo "== export (2) after making the colleague's change in fork/ too"; ts export; echo "rc=$?"
echo "(delete $T when done)"
