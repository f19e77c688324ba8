#!/bin/bash
# fork/.git/info/attributes with merge=union: te-series rebase resolves a real conflict by
# itself (union), reports success and exports a patch 0003 that no longer deletes the old
# paragraph (both the old and the new text now stand in op_fuser.rst).
. /work/tool-review-v26/common.sh
ts apply --te-src "$T/te-src" >/dev/null 2>&1
echo '*.rst merge=union' > "$T/proj/fork/.git/info/attributes"
ts rebase --onto up-conflict --te-src "$T/te-src" 2>&1 | tail -3; echo "rebase rc=${PIPESTATUS[0]}"
cd "$T/proj"
git diff --stat -- patches/0003*
echo "--- the doc now holds the old (upstream-edited) paragraph AND the patch's new one:"
grep -n "Channel bindings are CAPTURED\|A \`\`Sequential\`\` captures the channel bindings" fork/docs/examples/op_fuser/op_fuser.rst
