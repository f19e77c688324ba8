#!/bin/bash
# rebase --abort names the prerequisite commit as where "the series" is.
source /work/tool-review-v25/common.sh; source /work/tool-review-v25/lib_conflict.sh; set +e
ts apply --te-src $TE >/dev/null 2>&1
make_conflict_branch; before=$(git -C $T/fork rev-parse HEAD)
ts rebase --onto conflict --te-src $TE >/dev/null 2>&1
ts rebase --abort 2>&1 | head -1
echo "HEAD before=$before after=$(git -C $T/fork rev-parse HEAD)"
git -C $T/fork log -1 --oneline da44cd0f77a4
