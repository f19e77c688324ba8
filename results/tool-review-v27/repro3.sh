#!/bin/bash
# Finding 3 (minor): SIGKILL of `apply --force` after fork/ was moved into .te-series-backup but
# before fork.new/ was renamed to fork/: the backup message (with the fetch command) was never
# printed, and neither `status` nor `apply --continue` (which swaps fork.new in) mentions the
# backup that now holds the unexported commit, the stash and the uncommitted/untracked files.
T=/tmp/v27-repro3; source "$(dirname "$0")/common.sh"
K="$(cd "$(dirname "$0")" && pwd)/killer.py"
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj/fork
echo "# my edit" >> transformer_engine/pytorch/ops/fuser.py && git commit -qam "[PyTorch] My unexported work"
echo stash1 >> setup.py; git stash -q; echo "draft" > mydraft.txt; echo "uncommitted" >> README.rst
cd $T/proj
cp -a $T $T.copy
(cd $T.copy/proj && PYTHONPATH=$T.copy/proj/src TE_SERIES_CACHE=$T.copy/cache KILL_LOG=$T.copy/log \
   python3 "$K" apply --force --te-src $T/te-src >/dev/null 2>&1)
N=$(grep -n "^[0-9]* rename $T.copy/proj/fork.new" $T.copy/log | cut -d: -f1); rm -rf $T.copy
echo "== SIGKILL apply --force before step $N (rename of fork.new)"
KILL_AT=$N python3 "$K" apply --force --te-src $T/te-src 2>&1 | grep -v '^\[te'
echo "== status"; ts status
echo "== apply --continue"; ts apply --continue 2>&1 | grep -v '^\[te'
echo "== status"; ts status
echo "== where my work is (never named by the tool):"; ls -d .te-series-backup/*/fork
git -C .te-series-backup/*/fork log --oneline -1; git -C .te-series-backup/*/fork stash list
