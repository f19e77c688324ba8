#!/bin/bash
# minor: rebase onto an upstream commit that changed fuser.py without #3410: the stop names a
# throw-away folder "carry-XXXXXXXX/" instead of the commit/--te-src the user gave
cd "$(dirname "$0")"; source ./common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/te-src; git checkout -q -b up d0067d0da6cb01811b8072a7d304f0e00344ce2b
echo "# upstream edit" >> transformer_engine/pytorch/ops/fuser.py; git commit -qam "Upstream edit of fuser.py"
ts rebase --onto up --te-src $T/te-src 2>&1 | cut -c1-220
cleanup
