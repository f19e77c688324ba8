#!/bin/bash
# A colleague deletes a two-line comment from patch 0003; fork/ rewords only the first of
# those lines. export accepts and writes the comment back: the colleague's deletion of the
# second line, which fork/ never touched, is undone.
. /work/tool-review-v30/common.sh
trap cleanup EXIT
ts "$T/me" apply --te-src "$T/te" >/dev/null 2>&1
ts "$T/col" apply --te-src "$T/te" >/dev/null 2>&1
F=transformer_engine/pytorch/ops/sequential.py
# colleague: drop the comment (both lines), export, commit
sub "$T/col/fork/$F" "        # Lock the channel bindings only once every fuser is built, so that
        # an error leaves them unlocked
" ""
fixup "$T/col/fork" "Do not lock channel bindings in standalone"
ts "$T/col" export >/dev/null
git -C "$T/col" commit -qam "Drop a redundant comment"
# me: reword the first comment line in fork/, then pull the colleague's commit
sub "$T/me/fork/$F" "every fuser is built, so that" "every fuser has been built, so that"
fixup "$T/me/fork" "Do not lock channel bindings in standalone"
git -C "$T/me" pull -q --no-rebase --no-edit "$T/col" HEAD
P=patches/0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch
echo "--- colleague's patch, before export:"; grep -n "an error leaves them unlocked" "$T/me/$P" || echo "(line absent)"
ts "$T/me" export; echo "export rc=$?"
echo "--- after export:"; grep -n -B1 "an error leaves them unlocked" "$T/me/$P" || echo "(line absent)"
git -C "$T/me" diff --stat
