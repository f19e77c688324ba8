#!/bin/bash
# Finding 6 (minor): the FIRST series commit loses its patch-name note (an amend with
# notes.rewrite.amend=false, a cherry-pick). Export calls it an "upstream commit ... rebased by
# hand" and first advises taking it out of series (git rebase --onto BASE C series); the README
# promises the git notes command for a commit with a missing patch's subject.
source /work/tool-review-v35/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
$F notes --ref=te-series remove $(c "Flag channel") 2>/dev/null
ts export 2>&1
cleanup
