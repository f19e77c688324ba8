#!/bin/bash
# Finding 1: two patch-name notes swapped by hand (same PR group) plus an inserted commit
# (numbers shift): export silently moves the user's text below '---' from patch 0005 to 0004's
# successor, and reports "rename 0005-...producers -> 0005-...consumers".
source /work/tool-review-v35/common.sh
user_note 0005 "USER NOTE FOR PATCH 05 (producers)"
git -C $T/proj commit -qam "note below --- in 0005"
ts apply --te-src $T/te-src >/dev/null 2>&1
c4=$(c "in-place consumers"); c5=$(c "in-place producers")
$F notes --ref=te-series add -f -m "$(pn 0005)" $c4 2>/dev/null
$F notes --ref=te-series add -f -m "$(pn 0004)" $c5 2>/dev/null
c1=$(c "Flag channel")
(cd $T/proj/fork && GIT_SEQUENCE_EDITOR="sed -i -e '/^pick $c1/a exec echo new >> README.rst \&\& git commit -qa -s -m \"[PyTorch] Inserted commit\"'" \
   git rebase -q -i HEAD~11 >/dev/null 2>&1)
ts export 2>&1 | grep -E "consumers|producers|error"
echo "--- where the user's note is now:"
grep -l "USER NOTE FOR PATCH 05" $T/proj/patches/*.patch
cleanup
