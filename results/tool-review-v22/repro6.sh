#!/bin/bash
# R6: a stale fork/.git/index.lock when `rebase --onto` starts: the stop says to remove it and
# run `rebase --continue`; that says "the rebase was aborted ... nothing changed" and the
# rebase never happens (nothing says to run rebase --onto again).
. "$(dirname "$0")/prelude.sh"
ts apply --te-src $TE >/dev/null 2>&1 || echo apply failed
touch fork/.git/index.lock           # a killed git left it
ts rebase --onto up-clean --te-src $TE 2>&1 | grep -v '^\[te' | tail -2
rm fork/.git/index.lock              # as told
ts rebase --continue 2>&1 | grep -v '^\[te'
grep '^commit' patches/base.toml; ts status | tail -1
