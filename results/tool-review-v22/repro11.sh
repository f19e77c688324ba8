#!/bin/bash
# R11 (minor): at a rebase conflict stop, a draft of a file that a later patch creates: the
# first `rebase --continue` stops with the generic "no conflict markers ... full disk" text
# (not the "git would not pick ... files of yours" one); only the second names it; the third
# finishes (the draft kept in a stash).
. "$(dirname "$0")/prelude.sh"
ts apply --te-src $TE >/dev/null 2>&1 || echo apply failed
ts rebase --onto up-conflict --te-src $TE >/dev/null 2>&1
git -C fork checkout -q --theirs tests/pytorch/test_fusible_ops.py; git -C fork add tests/pytorch/test_fusible_ops.py
echo "my draft" > fork/docs/examples/op_fuser/moe_channels.py
for i in 1 2 3; do echo "== rebase --continue #$i"; ts rebase --continue 2>&1 | grep -E '^(te-series|Fix that|git would|rebased)' | cut -c1-220; done
git -C fork stash list
