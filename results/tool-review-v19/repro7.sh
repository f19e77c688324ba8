#!/bin/bash
# F7: status says "10 of 10 applied (complete)" for a fork/ whose patch file was edited by
# hand since apply; export (even --dry-run) refuses for exactly that reason.
source "$(dirname "$0")/fresh.sh" he
ts apply --te-src $TE >/dev/null 2>&1
f=$(ls patches/0003-*.patch); sed -i 's/^still expects a directly built OperationFuser to lock.$/&\nHand-edited note./' $f
git diff --stat
echo "== status"; ts status
echo "== export --dry-run"; ts export --dry-run 2>&1 | sed -n '/refuses/,$p' | cut -c1-200
