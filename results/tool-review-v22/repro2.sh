#!/bin/bash
# R2: export's advice for a fork/ on another branch whose commits are rewrites of series'
# commits (an amend done on a side branch) is "checkout series && cherry-pick ...": followed
# literally it stops at an empty cherry-pick, and ends with the amendment as a new 12th
# patch (same subject as 0010) at the end of the last PR instead of a changed 0010.
. "$(dirname "$0")/prelude.sh"
ts apply --te-src $TE >/dev/null 2>&1 || echo apply failed
cd fork
git checkout -q -b work
C=$(git log --format=%H --grep='Support backward with retain_graph' -1)
GIT_SEQUENCE_EDITOR="sed -i 's/^pick ${C:0:7}/edit ${C:0:7}/'" git rebase -q -i HEAD~3 >/dev/null 2>&1
echo "# tweak" >> transformer_engine/pytorch/ops/op.py
git commit -q -a --amend --no-edit
git rebase --continue >/dev/null 2>&1
cd ..
ts export --dry-run 2>&1 | tail -1
ADV=$(ts export --dry-run 2>&1 | grep -o 'git -C fork checkout series && git -C fork cherry-pick [0-9a-f ]*')
echo "== following: $ADV"; eval "$ADV"; echo "rc=$?"
echo "== export now says:"; ts export --dry-run 2>&1 | tail -1
echo "== git -C fork cherry-pick --continue:"; git -C fork cherry-pick --continue 2>&1 | head -2
echo "== git -C fork cherry-pick --skip, then export --dry-run:"
git -C fork cherry-pick --skip; ts export --dry-run 2>&1 | grep -v unchanged
