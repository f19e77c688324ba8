#!/usr/bin/env bash
# Finding 6, second part: at that stop `status` says "resolve, git -C fork/ add the files,
# then te-series rebase --continue". Doing so with the file git names makes the stopped
# patch two commits: 0010 becomes the draft alone (original message and author), and the
# real change an extra "new" patch 0011 with the same subject; the rebase exports both.
bash "$(dirname "$0")/repro6.sh" >/dev/null 2>&1
W=/tmp/h41r-r6; P=$W/proj; export TE_SERIES_CACHE=$W/cache
ts() { (cd "$P" && PYTHONPATH="$P/src" python3 -m te_series "$@"); }
cd "$P"
ts status | tail -1
git -C fork add docs/examples/op_fuser/moe_channels.py           # "git add the files"
ts rebase --continue 2>&1 | grep -v Rebasing | tail -3              # add/add conflict now
( cd fork && git checkout -q --theirs docs/examples/op_fuser/moe_channels.py && git add -u )
ts rebase --continue 2>&1 | grep -E 'change 0011|add 0012|rebased onto'
grep -E '^(diff --git|\+my draft)' patches/0011-*.patch patches/0012-*.patch
