#!/bin/bash
# Repro 2: range-diff REV on a revision whose patches/series (or base.toml) is not UTF-8 or
# lists a patch twice / a non-.patch name gives advice about the WORKING-TREE file
# ("restore the file (git checkout -- patches/series)", "remove one line"); following it
# changes nothing and range-diff REV refuses again the same way.
T=$(mktemp -d /tmp/try33-XXXXXX); source /work/tool-review-v33/common.sh
cd $T/proj
printf '\xff\xfe bad utf8\n' >> patches/series; git commit -qam "oops: non-UTF-8 series"; git tag nonutf
git checkout -q HEAD~1 -- patches/series
l=$(grep -m1 '^0001' patches/series); echo "$l" >> patches/series; git commit -qam "oops: dup"; git tag dup
git checkout -q HEAD~2 -- patches/series; git commit -qam "fixed"
echo "--- range-diff nonutf:"; ts range-diff nonutf 2>&1 | tail -1
echo "--- following it: git checkout -- patches/series; range-diff nonutf again:"
git checkout -- patches/series; ts range-diff nonutf 2>&1 | tail -1
echo "--- range-diff dup:"; ts range-diff dup 2>&1 | tail -1
echo "(the working tree's series has no duplicate; nothing to remove:)"; grep -c '^0001' patches/series
ts range-diff dup 2>&1 | tail -1
cleanup
