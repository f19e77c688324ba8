#!/bin/bash
# F4: git dies while `rebase --onto` checks out the new base (here git's file-size limit,
# ulimit -f, kills it with SIGXFSZ: as a kill -9 or a crash of git would). HEAD was never
# detached. The tool's advice (add what resolves the patch, stash the rest, --continue)
# replays the series onto its own old tip: conflicts of each patch with itself, then a
# --continue that fails the same way for ever. Only --abort gets out.
source "$(dirname "$0")/fresh.sh" u1
ts apply --te-src $TE >/dev/null 2>&1
echo "== rebase --onto newmain under ulimit -f 130"
(ulimit -f 130; ts rebase --onto newmain --te-src $TE 2>&1 | grep -v '^\[')
echo "== status"; ts status
echo "== git -C fork status (HEAD still on the series, half-written files)"; git -C fork status | head -3; git -C fork status --short
echo "== te-series rebase --continue"; ts rebase --continue 2>&1 | grep -v '^\['
echo "== follow it: nothing resolves a patch here, so put them all aside, then --continue"
git -C fork stash push -q -- $(git -C fork diff --name-only); echo "stash rc=$?"
echo "== git names a lock the tool's advice did not: remove it (git's own advice), stash again"
rm -f fork/.git/index.lock; git -C fork stash push -q -- $(git -C fork diff --name-only); echo "stash rc=$?"
ts rebase --continue 2>&1 | grep -v '^\[' | tail -3
echo "== resolve each stop (theirs), git add, te-series rebase --continue"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
  files=$(git -C fork diff --name-only --diff-filter=U); [ -z "$files" ] && break
  for f in $files; do git -C fork checkout -q --theirs -- "$f"; git -C fork add -- "$f"; done
  ts rebase --continue 2>&1 | grep -v '^\[' | grep -v '^   *Rebasing' | head -12
done
echo "== series branch now (old series + replayed copies):"; git -C fork log --oneline | head -12
echo "== te-series rebase --continue, again and again"
for i in 1 2; do ts rebase --continue 2>&1 | grep -v '^\[' | head -4; done
echo "== --abort gets out"; ts rebase --abort 2>&1 | head -2; ts status; ts export --dry-run | grep -c unchanged
