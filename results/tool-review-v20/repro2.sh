#!/bin/bash
# Finding 2: a git am killed by a signal (here SIGXFSZ from `ulimit -f`; SIGKILL or the OOM
# killer do the same) leaves fork/.git/index.lock. The stop says only "killed by signal 25;
# run te-series status"; status says "go on: te-series apply --continue"; --continue fails
# on a `git stash push` with no reason given, every time.
. "$(dirname "$0")/prelude.sh" 2
# stop apply after a patch or two (SIGTERM stops it as Ctrl-C does)
(PYTHONPATH="$W/proj/src" exec python3 -m te_series apply --te-src "$W/te" >/dev/null 2>&1) & pid=$!
S=fork.new/.git/te-series/state.json
until [ -f $S ] && python3 -c "import json,sys; sys.exit(json.load(open('$S'))['applied'] < 1)" 2>/dev/null; do sleep 0.02; done
kill -TERM $pid; wait $pid
echo "== after SIGTERM:"; ts status | head -1
# 0004 grows tests/pytorch/test_fusible_ops.py past 210 KiB: git am is killed mid-write
echo "== apply --continue under ulimit -f 210:"
(ulimit -f 210; ts apply --continue 2>&1 | tail -1)
ls -l fork/.git/index.lock
echo "== status:"; ts status | tail -2
for i in 1 2; do echo "== apply --continue ($i):"; ts apply --continue 2>&1 | tail -2; done   # loops
echo "== status:"; ts status | tail -1
echo "== what fixes it (named nowhere):"; rm fork/.git/index.lock && ts apply --continue 2>&1 | tail -1
