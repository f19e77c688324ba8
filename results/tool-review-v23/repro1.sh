#!/bin/bash
# A note between two file diffs of a patch (text git am leaves out of the commit) is dropped
# by an export that changes nothing in fork/.
. "$(dirname "$0")/common.sh" 1
p=patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
python3 - $p <<'PY'
import sys
p=sys.argv[1]; s=open(p).read()
i=s.index('diff --git a/docs/examples/op_fuser/op_fuser.rst')
open(p,'w').write(s[:i]+'Reviewer note: the example above was run on an H100.\n'+s[i:])
PY
git commit -qam 'patches: a reviewer note in 0011'
ts apply --force --te-src "$W/te" >/dev/null 2>&1   # fork/ from the committed patches
ts export | grep -v unchanged                       # nothing changed in fork/
git diff --stat
grep -c 'Reviewer note' $p && echo "note kept" || echo "BUG: note dropped by a no-op export"
