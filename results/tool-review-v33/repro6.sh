#!/bin/bash
# Repro 6 (minor): rebase onto a commit that already has the last patch (its PR group becomes
# empty): the empty-group refusal ends "..., commit, and te-series rebase --continue", but that
# command (without --drop) refuses again; only "rebase --continue --drop NAME" finishes.
T=$(mktemp -d /tmp/try33-XXXXXX); source /work/tool-review-v33/common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/te-src; git checkout -q -b took d0067d0da; git am -q $T/proj/patches/0011-*.patch; git checkout -q --detach d0067d0da
cd $T/proj
N=0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
ts rebase --onto took --te-src $T/te-src 2>&1 | tail -1
echo "--- (minor 2) status now names the OLD prerequisite commit; fork/ HEAD is on:"; ts status 2>&1 | grep prerequisite; git -C fork log --format="%h %s" --grep="^Reduce Grouped MLP" -1 HEAD; echo "(da44cd0f77a4 is an ancestor of HEAD: $(git -C fork merge-base --is-ancestor da44cd0f77a4 HEAD && echo yes || echo no))"
echo "--- following it: rebase --continue --drop $N"; ts rebase --continue --drop $N 2>&1 | tail -2
echo "--- following that: remove the # pr: line, delete pr/moe-example.md, commit, then 'te-series rebase --continue':"
sed -i '/^# pr: moe-example/d' patches/series; git rm -q patches/pr/moe-example.md; git commit -qam "empty moe-example"
ts rebase --continue 2>&1 | tail -1
echo "--- only this finishes:"; ts rebase --continue --drop $N 2>&1 | tail -3
cleanup
