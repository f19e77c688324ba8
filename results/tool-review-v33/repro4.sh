#!/bin/bash
# Repro 4: export on a full disk (fork/ on a full file system) whose git notes step fails
# prints git's raw failure ("git notes ... failed in ...: fatal: update_ref failed ...
# couldn't write '...refs/notes/te-series.lock'") instead of the tool's full-disk stop.
# Needs root (mounts a small tmpfs at fork/).
T=$(mktemp -d /tmp/try33-XXXXXX); source /work/tool-review-v33/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj/fork
c3=$(git log --format=%h -1 --grep='Do not lock channel')
GIT_SEQUENCE_EDITOR="sed -i '/^pick $c3/s/^pick/reword/'" GIT_EDITOR="sed -i '1s/.*/[PyTorch] Renamed subject for standalone calls/'" git rebase -q -i HEAD~11 >/dev/null 2>&1
cd $T/proj
mkdir $T/small; mount -t tmpfs -o size=300m tmpfs $T/small
cp -a fork/. $T/small/; rm -rf fork; mkdir fork; mount --bind $T/small fork
ts export --dry-run >/dev/null 2>&1; git -C fork status -s >/dev/null   # index fresh
for L in 0 4 8 12 16 20 24 28 32 40 48; do
  sync; av=$(df --output=avail -B1024 $T/small | tail -1); fallocate -l $((av - L))K $T/small/.git/.filler
  out=$(ts export 2>&1); rm -f $T/small/.git/.filler
  if echo "$out" | grep -q "failed in"; then echo "--- export with $L KiB free on fork/'s disk:"; echo "$out"; break; fi
  echo "($L KiB free: $(echo "$out" | head -1 | cut -c1-120))"
done
echo "--- space back, export again:"; ts export 2>&1 | grep -v unchanged | head -3
cd /; umount $T/proj/fork; umount $T/small; cleanup
