#!/bin/bash
# Minor: after a colleague's inserted patch (renumbering), status says fork/ has no commit
# for the renumbered patches, and export --dry-run shows no plan, only the refusal.
. "$(dirname "$0")/common.sh"
ts me apply --te-src "$T/te-src" >/dev/null 2>&1
ts col apply --te-src "$T/te-src" >/dev/null 2>&1
cd "$T/col/fork"
c=$(git log --format=%H --grep='Test channel routing' -n1)
git checkout -q -b tmp "$c"; echo "# note" > NOTE_X.md; git add NOTE_X.md
git commit -qs -m "[PyTorch] Add a note file" -m "Body of the note commit."
git rebase -q --onto tmp "$c" series; git branch -q -D tmp
cd "$T"; ts col export >/dev/null; git -C col add -A patches; git -C col commit -qm "col: insert"
git -C me pull -q ../col HEAD
echo "--- status"; ts me status || true
echo "--- export --dry-run"; ts me export --dry-run 2>&1 || true
