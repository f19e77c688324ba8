#!/bin/bash
# rebase --onto while a patch file has an uncommitted note; the upstream commit changes a file of
# that patch. The rebase stops at its end; its advice ("commit them and rebuild fork/ ..., then
# te-series rebase --continue"), followed literally, throws the rebase away and dead-ends.
cd "$(dirname "$0")"; source ./common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/te-src
git fetch -q $T/proj/fork series
PRE=$(git log --format=%H --grep='Reduce Grouped MLP' -1 FETCH_HEAD)
git checkout -q -b up d0067d0da6cb01811b8072a7d304f0e00344ce2b
git cherry-pick $PRE >/dev/null
sed -i "1s/^/# upstream header line\n/" transformer_engine/pytorch/ops/basic/make_extra_output.py; git commit -qam "Upstream change to make_extra_output.py"
cd $T/proj
P=patches/0005-PyTorch-Keep-in-place-producers-from-writing-into-ch.patch
sed -i '0,/^---$/s//---\nNOTE OF MINE (uncommitted)/' $P
echo "=== rebase --onto up"; ts rebase --onto up --te-src $T/te-src 2>&1 | grep -v '^\[te-series'
if [ "${SIMPLE:-0}" = 1 ]; then
  echo "=== commit, rebase --continue"
  git add $P && git commit -qm "note"
  ts rebase --continue 2>&1 | grep -v '^\[te-series' | grep -v unchanged
else
  echo "=== follow the advice: commit, rebuild, rebase --continue"
  git add $P && git commit -qm "note"
  ts apply --force --te-src $T/te-src 2>&1 | grep -v '^\[te-series' | cut -c1-150
  ts rebase --continue 2>&1 | grep -v '^\[te-series'
fi
echo "=== base.toml commit:"; grep '^commit' patches/base.toml; grep -c "NOTE OF MINE" $P
git -C fork log --format='%h %s' -13 | tail -2
cleanup
