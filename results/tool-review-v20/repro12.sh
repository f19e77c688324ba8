#!/bin/bash
# Finding 12: export renames the patch-name notes in fork/ to the names it writes. Undo an
# export's change to patches/ (git checkout -- patches: "not yet") and the next export says
# fork/ "holds no commit of its own" for the patch (it does, noted with the new name) and
# offers --drop or a rebuild; --drop then refuses to empty the PR group, and its advice,
# followed, deletes the PR's description and re-stacks the PRs on it, only to reach the
# refusal that was the real one: patches/ changed since the export (rebuild fork/).
. "$(dirname "$0")/prelude.sh" 12
ts apply --te-src "$W/te" >/dev/null 2>&1
base=$(python3 -c "import json; print(json.load(open('fork/.git/te-series/state.json'))['base'])")
c=$(git -C fork log --format=%h --grep="Do not lock channel" -1)
GIT_SEQUENCE_EDITOR="sed -i 's/^pick $c/reword $c/'" \
GIT_EDITOR="sed -i '1s/.*/[PyTorch] Do not lock channel bindings in standalone op calls (v2)/'" \
  git -C fork rebase -q -i "$base" >/dev/null
ts export | grep -v unchanged
git checkout -q -- patches && git clean -qfd patches          # not yet: undo the export
echo "== status:"; ts status | head -1
echo "== export:"; ts export 2>&1 | fold -w 160
echo "== export --drop (as offered):"
ts export --drop 0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch 2>&1 | fold -w 160
git -C fork notes --ref=te-series show "$(git -C fork log --format=%h --grep='(v2)' -1)"   # the commit and its note
echo "== follow the 'empty the group' advice literally:"
sed -i '/^# pr: standalone-lock on fixes$/d; s/^# pr: in-place on standalone-lock$/# pr: in-place on fixes/' patches/series
git rm -q patches/pr/standalone-lock.md && git commit -qam "as told"
ts export --drop 0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch 2>&1 | fold -w 160
