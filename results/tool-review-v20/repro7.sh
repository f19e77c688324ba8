#!/bin/bash
# Finding 7: status says "10 of 10 patch(es) ... applied (complete)" for a fork/ that holds
# no commit of one patch (dropped with git rebase -i; a `git reset --hard` does the same);
# export refuses, saying fork/ holds no commit of its own for it.
. "$(dirname "$0")/prelude.sh" 7
ts apply --te-src "$W/te" >/dev/null 2>&1
base=$(python3 -c "import json; print(json.load(open('fork/.git/te-series/state.json'))['base'])")
GIT_SEQUENCE_EDITOR="sed -i '/Keep in-place producers/s/^pick/drop/'" git -C fork rebase -q -i "$base"
ts status | head -1
ts export --dry-run 2>&1 | cut -c1-260
