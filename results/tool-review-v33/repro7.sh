#!/bin/bash
# Repro 7 (minor): a full disk when rebase --onto writes its export stops with "... and export
# again"; `te-series export` (and the same rebase command) then refuse: "a te-series rebase ...
# is not finished: te-series rebase --continue". Not a loop (that works), but the advice is
# the wrong verb. Needs root (mounts a 300 MiB tmpfs). Scans free-space levels.
T=$(mktemp -d /tmp/try33-XXXXXX); source /work/tool-review-v33/common.sh
cd $T/te-src; git checkout -q -b took2 d0067d0da; echo "Trailing note." >> docs/examples/op_fuser/op_fuser.rst
git commit -qam "Upstream: docs tweak (#9999)"; git checkout -q --detach d0067d0da
ts apply --te-src $T/te-src >/dev/null 2>&1
mkdir $T/small $T/tmp; mount -t tmpfs -o size=300m tmpfs $T/small; export TMPDIR=$T/tmp
for L in $(seq 400 16 520); do
  rm -rf $T/small/proj; cp -a $T/proj $T/small/proj; git -C $T/small/proj/fork status -s >/dev/null
  sync; av=$(df --output=avail -B1024 $T/small | tail -1); fallocate -l $((av - L))K $T/small/.filler
  out=$(cd $T/small/proj && python3 -m te_series rebase --onto took2 --te-src $T/te-src 2>&1)
  rm -f $T/small/.filler
  if echo "$out" | grep -q "and export again"; then
    echo "--- $L KiB free:"; echo "$out" | tail -2
    echo "--- following it: te-series export"; (cd $T/small/proj && python3 -m te_series export 2>&1 | tail -1)
    echo "--- te-series rebase --continue"; (cd $T/small/proj && python3 -m te_series rebase --continue 2>&1 | tail -1)
    break
  fi
done
cd /; umount $T/small; cleanup
