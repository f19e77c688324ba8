#!/usr/bin/env bash
# Finding 5: a new commit of yours as the first patch (below the first series patch, e.g.
# a preparatory change, or the first half of a split first patch) is called an "upstream
# commit", and the advice's command drops it, saying it "stay[s] on upstream's refs".
. "$(dirname "$0")/prelude.sh" r5 >/dev/null
cd "$P"
ts apply --te-src "$TE" >/dev/null 2>&1
B=$(git -C fork rev-parse HEAD~11)       # top of the prerequisite, where the series starts
( cd fork && git checkout -q --detach "$B"
  sed -i '1s/^/Preparatory line.\n/' README.rst
  git -c user.name=Tester -c user.email=tester@corp.io commit -qam "[Docs] Prepare the README for extra-tensor channels

A new first patch of mine.

Signed-off-by: Tester <tester@corp.io>"
  git rebase -q --onto HEAD "$B" series )      # the series on top of it (notes carried)
git -C fork log --format='%h %an: %s' "$B"..HEAD | tail -3
ts export 2>&1 | tee /tmp/r5.out
# follow the advice as written
cmd=$(sed -n 's/.*Take them out: \(git -C fork rebase --onto [0-9a-f]* [0-9a-f]* series\).*/\1/p' /tmp/r5.out)
echo "+ $cmd"; $cmd 2>&1 | tail -1
new=$(echo "$cmd" | awk '{print $7}')
echo "branches/tags holding $new: [$(git -C fork branch -a --contains "$new"; git -C fork tag --contains "$new")] (none: it was on no upstream ref)"
ts export | grep -v unchanged    # exports, the new first patch gone
