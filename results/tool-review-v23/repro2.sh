#!/bin/bash
# A note after the last hunk of a patch (git am leaves it out of the commit) is kept by a
# no-op export but silently dropped once the patch's diff changes (a fixup in fork/).
. "$(dirname "$0")/common.sh" 2
p=patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
printf 'Note for reviewers: the qa hunk is temporary.\n' >> $p
git commit -qam 'patches: a note at the end of 0011'
ts apply --force --te-src "$W/te" >/dev/null 2>&1
ts export | grep -v unchanged; grep -c 'Note for reviewers' $p   # no-op export: kept (1)
echo '# one more line' >> fork/qa/L0_pytorch_unittest/test.sh
git -C fork commit -qa --amend --no-edit                      # change 0011's diff
ts export | grep -v unchanged
grep -q 'Note for reviewers' $p && echo "note kept" || echo "BUG: note dropped when the diff changed"
