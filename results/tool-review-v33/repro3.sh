#!/bin/bash
# Repro 3: a full disk during port --edit's 3-way merge (git rebase) is reported as a merge
# conflict of patch '' in "(no file)", with advice to change the series or to take 2.19.0 out
# of base.toml's [port] targets; git's "No space left on device" is never shown.
# Needs root (mounts a 300 MiB tmpfs). Scans free-space levels until the stop appears.
T=$(mktemp -d /tmp/try33-XXXXXX); source /work/tool-review-v33/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
mkdir -p $T/small $T/tmp && mount -t tmpfs -o size=300m tmpfs $T/small
export TMPDIR=$T/tmp
found=
for L in $(seq 9000 32 10200); do
  rm -rf $T/small/proj; cp -a $T/proj $T/small/proj; git -C $T/small/proj/fork status -s >/dev/null
  sync; av=$(df --output=avail -B1024 $T/small | tail -1); fallocate -l $((av - L))K $T/small/.filler
  out=$(cd $T/small/proj && python3 -m te_series port --edit --release 2.19.0 2>&1)
  rm -f $T/small/.filler
  if echo "$out" | grep -q "3-way merge of patch '' conflicts"; then found=$L; break; fi
done
if [ -n "$found" ]; then
  echo "--- with $found KiB free, port --edit says:"
  echo "$out" | grep -v '^\[te-series' | grep -v '^  [ +@-]\|^  diff\|^  index\|^  \.\.\.'
  echo "--- git's own 'No space left' shown? $(echo "$out" | grep -c 'No space left')"
  echo "--- with space back, the same command:"
  (cd $T/small/proj && python3 -m te_series port --edit --release 2.19.0 2>&1 | tail -1)
else echo "window not hit on this machine (try another range)"; fi
umount $T/small; cleanup
