#!/bin/bash
# Full disk during export: "git mailsplit cannot read 0001-...patch ... It is no mail ...:
# restore it (git checkout HEAD -- <project>/fork/0001-...patch ...)": no such file exists.
source /work/tool-review-v32/fulldisk.sh
for free in 300 320 340 360 380; do
  fill $free
  python3 -m te_series export > $T/out 2>&1; rc=$?
  if grep -q "mailsplit cannot read" $T/out; then
    echo "== with ${free} KiB free, rc=$rc:"; cat $T/out
    f=$(grep -o "git checkout HEAD -- [^,]*" $T/out | head -1 | sed 's/git checkout HEAD -- //')
    echo "== the advised command: git checkout HEAD -- $f"
    git checkout HEAD -- "$f"; echo "rc=$?"; ls -l "$f"
    echo "== the file it blames in patches/ is intact:"; git status --short patches
    break
  fi
done
rm -f $T/small/filler
cleanup_fd
