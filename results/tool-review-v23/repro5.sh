#!/bin/bash
# rebase --abort, as the conflict stop and `status` advise, fails with git's raw error when
# fork/ has an untracked file where the series (the commit to go back to) has a file; running
# it again fails the same way, and status keeps advising it.
. "$(dirname "$0")/common.sh" 5
git -C "$W/te" checkout -q -b up-conflict d0067d0da6cb01811b8072a7d304f0e00344ce2b
sed -i 's/                groups\[idx\] = OperationFuser(group)$/&  # upstream edit/' \
  "$W/te/transformer_engine/pytorch/ops/sequential.py"
git -C "$W/te" -c user.name=U -c user.email=u@x commit -qam "Upstream edit of sequential"
ts rebase --onto up-conflict --te-src "$W/te" 2>&1 | grep -E 'error|give up'
# at the stop (patch 0003), the user starts a draft of a file that a later patch (0011) adds
echo "MY DRAFT" > fork/docs/examples/op_fuser/moe_channels.py
echo "--- te-series rebase --abort (as advised):"
ts rebase --abort 2>&1; echo "rc=$?"
echo "--- again:"
ts rebase --abort 2>&1 | head -2; echo "rc=${PIPESTATUS[0]}"
echo "--- status:"; ts status 2>&1 | tail -1
echo "--- the draft is still there:"; cat fork/docs/examples/op_fuser/moe_channels.py
