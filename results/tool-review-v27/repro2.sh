#!/bin/bash
# Finding 2: SIGKILL of `export --drop` (or `rebase --continue --drop`) after patches/series is
# replaced but before the dropped patch file is deleted: the file stays in patches/ for good.
# The next export says nothing about it, `export --drop NAME` refuses ("not in patches/series"),
# status says "complete".
T=/tmp/v27-repro2; source "$(dirname "$0")/common.sh"
K="$(cd "$(dirname "$0")" && pwd)/killer.py"
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
D=0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
# drop the last patch on purpose: empty its PR group as export asks, drop its commit
sed -i '/^# pr: moe-example on fixes$/d' patches/series && git rm -q patches/pr/moe-example.md
git commit -qam "empty moe-example"
git -C fork reset -q --hard HEAD~1
# find the step at which export deletes the dropped patch file, on a copy
cp -a $T $T.copy
(cd $T.copy/proj && PYTHONPATH=$T.copy/proj/src TE_SERIES_CACHE=$T.copy/cache KILL_LOG=$T.copy/log \
   python3 "$K" export --drop $D >/dev/null 2>&1)
N=$(grep -n "Path.unlink $T.copy/proj/patches/$D" $T.copy/log | cut -d: -f1); rm -rf $T.copy
echo "== SIGKILL export --drop before step $N (the unlink of the dropped file)"
KILL_AT=$N python3 "$K" export --drop $D 2>&1 | grep -v '^\[te'
echo "== git status"; git status --short
echo "== te-series status"; ts status
echo "== te-series export"; ts export 2>&1 | grep -v '^\[te' | tail -2
echo "== te-series export --drop $D"; ts export --drop $D 2>&1 | grep -v '^\[te'
echo "== still there:"; ls patches/$D; grep -c "$D" patches/series
