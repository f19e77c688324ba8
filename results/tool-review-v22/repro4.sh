#!/bin/bash
# R4: two patches whose subjects agree in their first ~50 characters get the same file name
# slug. Insert a commit before them and export refuses: "the commit noted as 0009-X over
# 0010-X ... The patch-name notes in fork/ do not match its commits ... Rebuild the tree".
# The notes are right (the rename is a plain renumbering), and a rebuild gives back the same
# commits: redoing the insert gives the same refusal.
. "$(dirname "$0")/prelude.sh"
ts apply --te-src $TE >/dev/null 2>&1 || echo apply failed
cd fork
C9=$(git log --format=%h --grep="Take each fused op" -1)
GIT_SEQUENCE_EDITOR="sed -i 's/^pick $C9/reword $C9/'" \
GIT_EDITOR="sed -i '1s/.*/[PyTorch] Support backward with retain_graph=True in fusible ops, part 1/'" \
  git rebase -q -i HEAD~4 >/dev/null 2>&1
cd ..
ts export | grep -v unchanged; git add -A patches; git commit -qm "reword 0009"
cd fork                      # a new commit after 0008
C8=$(git log --format=%h --grep="Stop the fuser's backward pass" -1)
GIT_SEQUENCE_EDITOR="sed -i '/^pick $C8/a exec echo \"# new\" >> transformer_engine/pytorch/ops/op.py \&\& git commit -q -a -s -m \"[PyTorch] A new commit\" -m \"Body.\"'" \
  git rebase -q -i HEAD~5 >/dev/null 2>&1
cd ..
ts export --dry-run 2>&1 | grep -v unchanged
echo "== following the advice: rebuild, then make the same new commit again"
ts apply --force --te-src $TE 2>&1 | grep -v '^\[te' | tail -1
cd fork
C8=$(git log --format=%h --grep="Stop the fuser's backward pass" -1)
GIT_SEQUENCE_EDITOR="sed -i '/^pick $C8/a exec echo \"# new\" >> transformer_engine/pytorch/ops/op.py \&\& git commit -q -a -s -m \"[PyTorch] A new commit\" -m \"Body.\"'" \
  git rebase -q -i HEAD~5 >/dev/null 2>&1
cd ..
ts export --dry-run 2>&1 | grep -v unchanged | cut -c1-200
