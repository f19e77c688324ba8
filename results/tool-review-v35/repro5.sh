#!/bin/bash
# Finding 5: a patch-name note line holding a relative path (e.g. appended from inside fork/
# with tab completion: ../build/NAME) is used as a path under patches/: export deletes a file
# OUTSIDE patches/ (an ignored copy in build/), reporting "remove ../build/NAME (an earlier
# export, stopped, left it)". With ../patches/NAME it refuses with a false claim and advice
# that, followed, ends at a series line naming a missing file.
source /work/tool-review-v35/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
n3=$(pn 0003)
mkdir -p $T/proj/build && cp $T/proj/patches/$n3 $T/proj/build/   # build/ is git-ignored
$F notes --ref=te-series append -m "../build/$n3" $(c "Do not lock")
(cd $T/proj/fork && echo "# more" >> README.rst && git commit -qa -s -m "[PyTorch] Extra")
echo "== export:"; ts export 2>&1 | grep -v unchanged
echo "== build/ now:"; ls -A $T/proj/build
echo "== variant ../patches/NAME:"
git -C $T/proj add -A patches && git -C $T/proj commit -qm "export"
$F notes --ref=te-series add -f -m "$n3" $(c "Do not lock") 2>/dev/null
$F notes --ref=te-series append -m "../patches/$n3" $(c "Do not lock")
(cd $T/proj/fork && echo "# more2" >> README.rst && git commit -qa -s -m "[PyTorch] Extra two")
ts export 2>&1 | tail -1
echo "== following it (git rm, commit, export):"
git -C $T/proj rm -q patches/$n3 && git -C $T/proj commit -qm "rm as advised"
ts export 2>&1 | tail -1
echo "== following that (git checkout -- patches/$n3):"; (cd $T/proj && git checkout -- patches/$n3)
cleanup
