#!/bin/bash
# Finding 4 (minor): status says "11 of 11 patch(es) ... applied (complete)" while a te-series rebase is
# stopped on patch 3 (fork/ HEAD holds 2 rebased patches).
. "$(dirname "$0")/common.sh"
git -C "$T/te-src" checkout -q -b up-conflict $BASE
sed -i 's/^- Channel bindings are captured when an ``OperationFuser`` is$/- Channel bindings are CAPTURED when an ``OperationFuser`` is/' "$T/te-src/docs/examples/op_fuser/op_fuser.rst"
git -C "$T/te-src" commit -qam "upstream: docs tweak"; git -C "$T/te-src" checkout -q $BASE
ts rebase --onto up-conflict --te-src "$T/te-src" 2>&1 | tail -1
echo "== status"; ts status
echo "== series commits on fork/ HEAD now:"; git -C "$F" log --oneline HEAD~3..HEAD
