#!/bin/bash
# F5: `check --te-src` is ok, `pr --te-src` refuses (base lacks #3410) and its advice,
# "te-series rebase --onto origin/main --te-src PATH", changes nothing while upstream main
# has not merged #3410 (the README says our newest fetchable upstream predates it).
source "$(dirname "$0")/fresh.sh" pq
ts apply --te-src $TE >/dev/null 2>&1
ts pr --te-src $TE --identity "Jane Doe <jane@gmail.com>" 2>&1 | grep -v '^\['
ts rebase --onto origin/main --te-src $TE 2>&1 | grep -v '^\['
ts pr --te-src $TE --identity "Jane Doe <jane@gmail.com>" 2>&1 | grep -v '^\[' | cut -c1-120
