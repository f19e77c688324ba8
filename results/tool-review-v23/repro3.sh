#!/bin/bash
# rebase: conflict markers committed in a middle patch. The stop says "amend that commit
# (git -C fork commit --amend, ...)"; doing that literally amends HEAD (patch 0011), not the
# patch with the markers: the same stop comes back, and 0011 now carries the resolution.
. "$(dirname "$0")/common.sh" 3
git -C "$W/te" checkout -q -b up-conflict d0067d0da6cb01811b8072a7d304f0e00344ce2b
sed -i 's/                groups\[idx\] = OperationFuser(group)$/&  # upstream edit/' \
  "$W/te/transformer_engine/pytorch/ops/sequential.py"
git -C "$W/te" -c user.name=U -c user.email=u@x commit -qam "Upstream edit of sequential"
ts rebase --onto up-conflict --te-src "$W/te" 2>&1 | grep error
git -C fork add -A                      # (a careless add: markers staged)
ts rebase --continue 2>&1 | grep -A1 error
# follow the advice literally: resolve the markers in fork/, then git -C fork commit --amend
f=fork/transformer_engine/pytorch/ops/sequential.py
python3 - $f <<'PY'
import sys
p=sys.argv[1]; out=[]; mode=None
for l in open(p).read().split('\n'):
    if l.startswith('<<<<<<<'): mode='ours'; continue
    if l.startswith('=======') and mode: mode='theirs'; continue
    if l.startswith('>>>>>>>'): mode=None; continue
    if mode!='ours': out.append(l)
open(p,'w').write('\n'.join(out))
PY
git -C fork commit -q -a --amend --no-edit
echo "--- after git -C fork commit --amend:"
ts rebase --continue 2>&1 | grep -A1 error
git -C fork show --stat --format=%s HEAD | head -4
