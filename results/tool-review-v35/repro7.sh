#!/bin/bash
# Finding 7 (minor): rebase --onto on a nearly full disk: git's rebase finishes, the export step
# stops: "Make room, then run the same te-series command again"; the same command then refuses
# ("a te-series rebase ... is not finished: te-series rebase --continue"), which does work.
source /work/tool-review-v35/common.sh
git -C $T/te-src checkout -q -b newup && echo x >> $T/te-src/README.rst && git -C $T/te-src commit -qam "upstream change"
ts apply --te-src $T/te-src >/dev/null 2>&1
mkdir $T/mnt && mount -t tmpfs -o size=400m tmpfs $T/mnt && mkdir $T/mnt/tmp
P=$T/mnt/proj
tp() { (cd $P && TMPDIR=$T/mnt/tmp PYTHONPATH=$P/src python3 -m te_series "$@"); }
for k in 1500 1450 1550 1400 1600 1350 1650; do
  rm -rf $P $T/mnt/te-src; cp -a $T/proj $P; cp -a $T/te-src $T/mnt/te-src
  dd if=/dev/zero of=$T/mnt/filler bs=1k count=$(( $(df --output=avail -k $T/mnt | tail -1) - k )) 2>/dev/null
  out=$(tp rebase --onto newup --te-src $T/mnt/te-src 2>&1); rm -f $T/mnt/filler
  if grep -q "After a rebase" <<<"$out"; then
    echo "== rebase with ${k}k free:"; tail -2 <<<"$out"
    echo "== the same command again:"; tp rebase --onto newup --te-src $T/mnt/te-src 2>&1 | tail -1
    echo "== rebase --continue:"; tp rebase --continue 2>&1 | head -1
    break
  fi
done
cleanup
