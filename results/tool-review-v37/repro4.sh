#!/bin/bash
# two empty commits: the advice "give it a change (git -C fork commit --amend)" can only
# reach HEAD; for the older one it amends the other commit.
T=/tmp/try37-repro4-$$
source "$(dirname "$0")/common.sh" >/dev/null 2>&1
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj/fork
git commit -q --allow-empty -sm "[PyTorch] Empty one"
git commit -q --allow-empty -sm "[PyTorch] Empty two"
ts export
echo "--- follow 'give it a change (git -C fork commit --amend)' for 'Empty one':"
echo x > docs/x.txt; git add docs/x.txt; git -C $T/proj/fork commit -q --amend --no-edit
ts export
cleanup
