#!/bin/bash
# Finding 2: a colleague's export renamed patch 0005 (subject reworded); after git pull, export
# advises re-noting the commit with the new name; done literally, export dies on a
# FileNotFoundError of the OLD patch name, presented as "not the series': fix that, e.g. free
# space or a permission; then run the command again" -- which repeats forever.
source /work/tool-review-v35/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
# the colleague: own clone + fork, reword 0005, export, commit
git clone -q $T/proj $T/colleague
cp -a $T/proj/fork $T/colleague/fork
c5=$(git -C $T/colleague/fork log --format=%h --grep="in-place producers" -1)
(cd $T/colleague/fork && GIT_SEQUENCE_EDITOR="sed -i -e 's/^pick $c5/reword $c5/'" \
   GIT_EDITOR="sed -i -e '1s/Keep in-place producers/Stop in-place producers/'" git rebase -q -i HEAD~11 >/dev/null 2>&1)
(cd $T/colleague && PYTHONPATH=$T/colleague/src python3 -m te_series export >/dev/null && git add -A patches && git commit -qm "reword 0005")
# the user pulls it
git -C $T/proj pull -q --no-rebase $T/colleague HEAD
echo "== export (1):"; ts export --dry-run 2>&1 | tail -2
cmd=$(ts export --dry-run 2>&1 | grep -o "git -C fork notes.*" | head -1)
echo "== following: $cmd"; (cd $T/proj && eval "$cmd" 2>/dev/null)
echo "== export (2):"; ts export --dry-run 2>&1 | tail -2
echo "== export (3), as advised, again:"; ts export 2>&1 | tail -2
cleanup
