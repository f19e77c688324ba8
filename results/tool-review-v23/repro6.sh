#!/bin/bash
# A commit noted with the wrong patch name (e.g. a `git notes add -f -m NAME COMMIT`, the
# command export itself suggests for lost notes, given the wrong commit): export says the other
# patch has "no commit of its own" and advises --drop; following that moves the patch into
# another PR group and reports it both as added and as removed.
. "$(dirname "$0")/common.sh" 6
c4=$(git -C fork rev-parse HEAD~7)     # the commit of 0004 (PR 'in-place')
git -C fork notes --ref=te-series add -f -m 0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch "$c4" 2>/dev/null
ts export 2>&1 | grep error
ts export --drop 0004-PyTorch-Keep-in-place-consumers-from-writing-into-ch.patch | grep -v unchanged
git diff patches/series
ls patches/0004-* && echo "(the 'removed' file is still there)"
