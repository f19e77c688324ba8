#!/bin/bash
# status during a conflicted rebase names the OLD prerequisite commit as "below the series",
# though fork/'s HEAD is now on the new base (with a new prerequisite commit).
T=/tmp/try37-repro3-$$
source "$(dirname "$0")/common.sh" >/dev/null 2>&1
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/te-src; git checkout -q -b cf
sed -i 's/# Channel routing is captured by an OperationFuser when it is/# Channel routing is captured (upstream reworded) when it is/' transformer_engine/pytorch/ops/op.py
git commit -qam "[PyTorch] Reword (#3501)"
ts rebase --onto cf --te-src $T/te-src 2>&1 | sed -n 2p
ts status
OLD=$(python3 -c "import json;print(json.load(open('$T/proj/fork/.git/te-series/state.json'))['prerequisites']['3410'])")
git -C $T/proj/fork merge-base --is-ancestor $OLD HEAD && echo "old prerequisite below HEAD" || echo "old prerequisite ${OLD:0:12} is NOT below fork/'s HEAD; HEAD's is: $(git -C $T/proj/fork log --format='%h %s' -1 --grep='#3410')"
cleanup
