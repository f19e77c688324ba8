#!/bin/bash
# SIGKILL `apply` mid-series, `apply --continue` (as status says); the patch that was being
# applied when the kill landed is never recorded, so status/export then claim that its file
# "changed since fork/ was made from it" (it did not: git status is clean), and export refuses
# an edit of that patch. Timing-based: tries kill times until it hits.
source /work/tool-review-v25/common.sh; set +e
for t in 0.7 0.75 0.8 0.85 0.9 0.95 1.0 0.65; do
  sleep 1; rm -rf $T/fork $T/fork.new
  cd $T; PYTHONPATH=$T/src setsid python3 -m te_series apply --te-src $TE >/dev/null 2>&1 & pid=$!
  sleep $t; kill -KILL -$pid 2>/dev/null; wait $pid 2>/dev/null; sleep 0.5
  ts apply --continue >/dev/null 2>&1 || continue
  flagged=$(ts status 2>&1 | grep -o "patches/[^ ]*\.patch changed since" | head -1 | sed 's/ changed since//; s,patches/,,')
  [ -n "$flagged" ] && break
done
echo "kill at $t; status now:"; ts status
echo "--- git status of patches/ (nothing changed):"; git -C $T status --short patches; echo "(end)"
echo "--- reword the flagged patch's commit in fork/: $flagged"
cd $T/fork; subj=$(git log --format=%s --notes=te-series --grep="" series~11..series --format="%H %N" | grep -B0 "$flagged" | head -1)
id=$(git log --format="%H %N" --notes=te-series series~11..series | grep "$flagged" | cut -d' ' -f1)
GIT_SEQUENCE_EDITOR="sed -i \"s/^pick ${id:0:7}/reword ${id:0:7}/\"" GIT_EDITOR='sed -i "3s/^/Reworded by the user. /"' git rebase -q -i series~11 >/dev/null
cd $T; ts export; echo export=$?
