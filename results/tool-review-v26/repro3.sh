#!/bin/bash
# SIGKILL of `te-series pr` mid-run (a second run over an earlier pr-out/) leaves
# pr-out/.te-series-pr with an empty list; the next `pr` calls its own files "file(s) te-series
# pr did not write" and refuses until the whole folder is deleted.
. /work/tool-review-v26/common.sh
cd "$T/te-src" && git checkout -q -b main-3410 $BASE
git -C "$T/te-src" show 2500002700220dbe9ac33e21011988db9b2fe997 > /dev/null 2>&1 || true
# 2.20.2's fuser.py (the #3410 prerequisite) as an upstream commit, from a fork/ apply
( cd "$T/proj" && python3 -m te_series apply --te-src "$T/te-src" >/dev/null 2>&1 )
git -C "$T/proj/fork" show HEAD~11:transformer_engine/pytorch/ops/fuser.py > transformer_engine/pytorch/ops/fuser.py
git commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
cd "$T/proj"; git config user.name "Real Person"; git config user.email real@person.org
ts rebase --onto main-3410 --te-src "$T/te-src" >/dev/null 2>&1; git commit -qam rebased
ts pr --te-src "$T/te-src" >/dev/null 2>&1; echo "first pr rc=$?"
# second run, SIGKILLed while it formats the PR patches (about 2 s in; tune if it finishes first)
( cd "$T/proj" && exec python3 -m te_series pr --te-src "$T/te-src" >/dev/null 2>&1 ) & P=$!
for i in $(seq 1 200); do grep -q "these files:" pr-out/.te-series-pr 2>/dev/null && [ "$(wc -l < pr-out/.te-series-pr)" -le 2 ] && break; sleep 0.01; done
kill -9 $P; wait $P 2>/dev/null
echo "--- pr-out/.te-series-pr after the kill:"; cat pr-out/.te-series-pr
ts pr --te-src "$T/te-src" 2>&1 | grep error
