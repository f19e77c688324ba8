#!/bin/bash
# Full disk during export: export blames a correct commit message of the series (line 2, the
# blank line after the subject) and sends the user to reword it with rebase -i.
source /work/tool-review-v32/fulldisk.sh
for free in 380 400 420 440 460 480; do
  fill $free
  python3 -m te_series export > $T/out 2>&1; rc=$?
  if grep -q "reads it differently" $T/out; then
    echo "== with ${free} KiB free, rc=$rc:"; cat $T/out
    echo "== following the advice literally (reword with the message unchanged), then export again:"
    c=$(grep -o "commit [0-9a-f]\{12\}" $T/out | head -1 | cut -d' ' -f2)
    GIT_SEQUENCE_EDITOR="sed -i 's/^pick $c/reword $c/'" GIT_EDITOR=true \
      git -C fork -c commit.cleanup=whitespace -c commit.status=false rebase -i $(grep -o 'rebase -i [0-9a-f]*' $T/out | cut -d' ' -f3) 2>&1 | tail -1
    python3 -m te_series export 2>&1 | head -2
    break
  fi
done
rm -f $T/small/filler
echo "== with space back, the same export works (the message was fine):"; python3 -m te_series export 2>&1 | tail -1
cleanup_fd
