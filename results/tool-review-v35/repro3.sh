#!/bin/bash
# Finding 3: pr on a full disk stops with "No space left on device (... then run the command
# again ...)"; it has left pr-out/.te-series-pr.part behind (the list it writes first), and the
# rerun then refuses for good: "pr-out is not empty and was not written by te-series pr;
# choose another --out". (port --out: a partial DIR/R/ likewise makes the advised rerun refuse.)
source /work/tool-review-v35/common.sh
# an upstream main that has #3410, so that pr may run
git -C $T/te-src checkout -q -b main3410
ts apply --te-src $T/te-src >/dev/null 2>&1
git -C $T/proj/fork show HEAD~11:transformer_engine/pytorch/ops/fuser.py > $T/te-src/transformer_engine/pytorch/ops/fuser.py
git -C $T/te-src commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
ts rebase --onto main3410 --te-src $T/te-src >/dev/null 2>&1
git -C $T/proj commit -qam "rebased"
# the project and the TE checkout on a small file system of our own
mkdir $T/mnt && mount -t tmpfs -o size=400m tmpfs $T/mnt
cp -a $T/proj $T/mnt/proj && cp -a $T/te-src $T/mnt/te-src && mkdir $T/mnt/tmp
P=$T/mnt/proj
tp() { (cd $P && TMPDIR=$T/mnt/tmp PYTHONPATH=$P/src python3 -m te_series "$@"); }
dd if=/dev/zero of=$T/mnt/filler bs=1M 2>/dev/null   # fill it up
echo "== pr on a full disk:"; tp pr --te-src $T/mnt/te-src --identity "Real Person <real@corp.dev>" 2>&1 | tail -1
rm $T/mnt/filler                                       # "fix that, e.g. free space"
ls -A $P/pr-out
echo "== pr again, as advised:"; tp pr --te-src $T/mnt/te-src --identity "Real Person <real@corp.dev>" 2>&1 | tail -1
echo "== port --out on a full disk, then again:"
dd if=/dev/zero of=$T/mnt/filler bs=1M 2>/dev/null
tp port --out $P/port-out 2>&1 | tail -1; rm $T/mnt/filler; ls $P/port-out/2.19.0
tp port --out $P/port-out 2>&1 | tail -1
cleanup
