#!/bin/bash
# Repro 5 (minor): a full disk when apply --continue commits a patch the user resolved by hand
# is reported as a patch problem ("No file of fork.new/ has conflict markers: make the change
# by hand ..."), not as a full disk. Needs root (mounts a 300 MiB tmpfs).
T=$(mktemp -d /tmp/try33-XXXXXX); source /work/tool-review-v33/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
f=$(ls patches/0008-*.patch); cp $f $T/orig0008.patch
ln=$(awk '/^@@/{f=1;next} f && /^ ./{print NR; exit}' $f); sed -i "${ln}s/\$/ XX/" $f
git commit -qam "colleague: 0008 edited (context no longer matches)"
ts apply --force --te-src $T/te-src 2>&1 | tail -2 | cut -c1-200
git -C fork.new apply --index $T/orig0008.patch      # the change, made by hand and staged
mkdir $T/small $T/tmp; mount -t tmpfs -o size=300m tmpfs $T/small; export TMPDIR=$T/tmp
cp -a $T/proj $T/small/proj; git -C $T/small/proj/fork.new status -s >/dev/null
sync; av=$(df --output=avail -B1024 $T/small | tail -1); fallocate -l ${av}K $T/small/.filler
echo "--- apply --continue on a full disk:"; (cd $T/small/proj && python3 -m te_series apply --continue 2>&1 | tail -5)
rm -f $T/small/.filler
echo "--- space back, apply --continue:"; (cd $T/small/proj && python3 -m te_series apply --continue 2>&1 | tail -2 | cut -c1-200)
cd /; umount $T/small; cleanup
