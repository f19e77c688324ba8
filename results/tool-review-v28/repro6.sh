#!/bin/bash
# Finding 6 (minor): `pr` with pr-out/ a symbolic link to nothing (a disk not mounted) gives a raw OS
# error with unrelated advice ("free space or a permission").
. "$(dirname "$0")/common.sh"
# pr needs a base with #3410: an upstream branch that has it, and the series rebased there
git -C "$F" show HEAD~11:transformer_engine/pytorch/ops/fuser.py > "$T/fuser.py"   # the prerequisite commit's file
git -C "$T/te-src" checkout -q -b up3410 $BASE
cp "$T/fuser.py" "$T/te-src/transformer_engine/pytorch/ops/fuser.py"
git -C "$T/te-src" commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)"; git -C "$T/te-src" checkout -q $BASE
ts rebase --onto up3410 --te-src "$T/te-src" >/dev/null 2>&1 && git -C "$P" commit -qam rebased
ln -s "$T/not-mounted/pr-out" "$P/pr-out"
ts pr --te-src "$T/te-src" --identity "A Person <a@corp.org>" 2>&1 | grep -v '^\[te-series'
