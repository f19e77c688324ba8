#!/bin/bash
# Finding 1: a merge driver in the git dir of a fork/ whose .git is a file (separate git dir,
# or a linked worktree: info/attributes lives in the common git dir) is not refused; the
# tool's rebase resolves a conflict by union and exports a changed patch 0003 with no stop
# (the v26 #1 guard reads only fork/.git/info/attributes as a literal path).
T=/tmp/v27-repro1; source "$(dirname "$0")/common.sh"
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
cp -a $T/proj $T/proj-control   # same state, normal .git, for comparison
mv fork/.git $T/forkgit && echo "gitdir: $T/forkgit" > fork/.git
echo '*.rst merge=union' > $T/forkgit/info/attributes
echo "== control: a normal fork/ with the same attribute is refused; without it the rebase stops"
echo '*.rst merge=union' > $T/proj-control/fork/.git/info/attributes
(cd $T/proj-control && python3 -m te_series rebase --onto up-conflict --te-src $T/te-src 2>&1 | grep -v '^\[te' | head -2)
rm $T/proj-control/fork/.git/info/attributes
(cd $T/proj-control && python3 -m te_series rebase --continue 2>&1 | grep -v '^\[te' | head -1)
echo "== separate git dir with merge=union in its info/attributes"
ts rebase --onto up-conflict --te-src $T/te-src 2>&1 | grep -v '^\[te' | grep -v unchanged; echo "rc=${PIPESTATUS[0]}"
git diff --stat -- patches/0003-*
echo "== the patch no longer removes the old paragraph; fork/ holds both versions:"
grep -n 'Channel bindings are' fork/docs/examples/op_fuser/op_fuser.rst
