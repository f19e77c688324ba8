#!/bin/bash
# Hand-written text after a file's hunks in a patch: what happens when the commit drops that file?
source /work/tool-review-v25/common.sh; set +e
(cd $T && python3 - <<'PY'
import glob
p=glob.glob("patches/0011-*.patch")[0]; l=open(p).read().split("\n")
d=[k for k,x in enumerate(l) if x.startswith("diff --git a/docs/examples/op_fuser/op_fuser.rst")][0]
l.insert(d,"NOTE-AFTER-MOE: text after moe_channels.py's hunk")
d=[k for k,x in enumerate(l) if x.startswith("diff --git a/qa/")][0]
l.insert(d,"NOTE-AFTER-RST: text after op_fuser.rst's hunks")
open(p,"w").write("\n".join(l))
PY
git commit -qam "hand notes in 0011")
ts apply --te-src $TE >/dev/null 2>&1; echo apply=$?
cd $T/fork
git rm -q --cached docs/examples/op_fuser/moe_channels.py; rm docs/examples/op_fuser/moe_channels.py
git checkout -q HEAD~1 -- docs/examples/op_fuser/op_fuser.rst
git commit -q --amend --no-edit
cd $T; ts export --dry-run; echo rc=$?; ts export; echo rc=$?
grep -n "NOTE" patches/0011-*.patch; git diff patches/0011-*.patch | head -80
