#!/bin/bash
# Variant of repro1: an export undone with `git checkout -- patches` (file back to exactly the
# blob fork/ was applied from) is refused as "changed since fork/ was made from it"; the advice
# is a rebuild or undoing the work in fork/.
source "$(dirname "$0")/common.sh"
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
at_commit fork "Do not lock" "echo \"# mine in 0003\" >> transformer_engine/pytorch/ops/fuser.py; git commit -q -a --amend --no-edit"
ts export 2>&1 | grep -v unchanged
git checkout -- patches
echo "== export again"; ts export 2>&1 | tail -1
