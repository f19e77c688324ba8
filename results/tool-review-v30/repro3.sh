#!/bin/bash
# A colleague changes one comment line of patch 0003 (pulled into patches/). fork/ makes
# the very same change, and also inserts a new patch after 0002, so export renumbers
# 0003..0011. export refuses: "0003 changed since fork/ was made ... make the same change in
# fork/" -- fork/ has made it. Without the new patch the same export is accepted.
. /work/tool-review-v30/common.sh
trap cleanup EXIT
ts "$T/me" apply --te-src "$T/te" >/dev/null 2>&1
ts "$T/col" apply --te-src "$T/te" >/dev/null 2>&1
F=transformer_engine/pytorch/ops/sequential.py
sub "$T/col/fork/$F" "        # an error leaves them unlocked" "        # an error leaves them all unlocked"
fixup "$T/col/fork" "Do not lock channel bindings in standalone"
ts "$T/col" export >/dev/null
git -C "$T/col" commit -qam "Reword a comment of 0003"
# me: the same change in fork/ ...
sub "$T/me/fork/$F" "        # an error leaves them unlocked" "        # an error leaves them all unlocked"
fixup "$T/me/fork" "Do not lock channel bindings in standalone"
git -C "$T/me" pull -q --no-rebase --no-edit "$T/col" HEAD
echo "=== export with only the same change: accepted"
ts "$T/me" export --dry-run | grep -v unchanged || true
# ... and a new patch of mine after 0002 (renumbers 0003.. to 0004..)
c=$(git -C "$T/me/fork" log --format=%H --grep="Test channel routing" -n1)
git -C "$T/me/fork" checkout -q -b tmp $c
echo ".. note:: new" >> "$T/me/fork/docs/examples/op_fuser/op_fuser.rst"
git -C "$T/me/fork" commit -qam "[Docs] Add a note

Signed-off-by: Me Dev <me@corp.org>"
git -C "$T/me/fork" checkout -q series
git -C "$T/me/fork" rebase -q --onto tmp $c series
git -C "$T/me/fork" branch -q -D tmp
echo "=== export after inserting a patch: refused"
ts "$T/me" export && echo "rc=0" || echo "rc=$?"
echo "=== follow 'make the same change in fork/': fork/ already has it:"
git -C "$T/me/fork" grep -n "an error leaves them all unlocked" -- $F
