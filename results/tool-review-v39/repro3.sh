#!/bin/bash
# After a stopped te-series rebase, the user runs git's own `rebase --abort`: fork/ is back on
# the old base with the #3410 commit below the series, but status says the prerequisite is
# "already in the new base (no commit)".
cd /tmp; export T=/tmp/try39-r3-$$
source /work/tool-review-v39/common.sh >/dev/null 2>&1; source /work/tool-review-v39/conflict.sh
ts apply --te-src $T/te-src >/dev/null 2>&1; mk_conflict
ts rebase --onto main --te-src $T/te-src >/dev/null 2>&1
git -C $T/proj/fork rebase --abort
echo "== fork/ log:"; git -C $T/proj/fork log --oneline -13 | tail -2
echo "== status:"; ts status
cleanup
