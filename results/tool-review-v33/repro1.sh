#!/bin/bash
# Repro 1: export's advice for a merge commit ("Rebase them away (git -C fork rebase BASE)")
# silently drops a change made in the merge commit itself; the next export succeeds without it.
T=$(mktemp -d /tmp/try33-XXXXXX); source /work/tool-review-v33/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj/fork
git checkout -q -b side HEAD~1
echo "# side" >> transformer_engine/pytorch/ops/fuser.py
git commit -qam "[PyTorch] side work

Signed-off-by: T <t@nvidia.com>"
git checkout -q series
git merge -q --no-commit side >/dev/null
echo "# EDIT MADE WHILE MERGING" >> transformer_engine/pytorch/ops/basic/__init__.py
git add -A && git commit -q --no-edit
cd $T/proj
echo "--- export --dry-run:"; ts export --dry-run 2>&1
base=$(ts export --dry-run 2>&1 | sed -n 's/.*git -C fork rebase \([0-9a-f]*\)).*/\1/p')
echo "--- following the advice: git -C fork rebase $base"
git -C fork rebase $base 2>&1 | tail -1
echo "--- the merge's own edit in fork/ now: $(grep -c 'EDIT MADE WHILE MERGING' fork/transformer_engine/pytorch/ops/basic/__init__.py) occurrence(s)"
ts export 2>&1 | grep -v unchanged
echo "--- in patches/: $(cat patches/*.patch | grep -c 'EDIT MADE WHILE MERGING') occurrence(s)"
cleanup
