#!/bin/bash
# Finding 4: patch 0005's note copied by hand onto 0003's commit (git notes copy -f). Export
# says fork/ holds no commit for 0003 and advises --drop 0003 or a rebuild; --drop is refused
# ("... Rebuild the tree"); the commit that IS 0003 (same subject, same patch-id) is never named
# with the git notes command that fixes it (as it is when the copy goes to a later commit).
source /work/tool-review-v35/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
$F notes --ref=te-series copy -f $(c "in-place producers") $(c "Do not lock") 2>/dev/null
echo "== export:"; ts export 2>&1
echo "== following the advice: export --drop $(pn 0003)"; ts export --drop $(pn 0003) 2>&1
echo "== (the other direction, copy onto a LATER commit, is diagnosed right:)"
$F notes --ref=te-series add -f -m $(pn 0003) $(c "Do not lock") 2>/dev/null
$F notes --ref=te-series copy -f $(c "Do not lock") $(c "in-place producers") 2>/dev/null
ts export 2>&1 | tail -1
cleanup
