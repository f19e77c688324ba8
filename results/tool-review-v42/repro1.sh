#!/bin/bash
# An exported-but-not-yet-committed patch file is deleted by accident; every advice path
# either fails (git checkout of a never-committed file) or leads to a rebuild / dropping the commit.
source "$(dirname "$0")/common.sh"
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
echo "# mine" >> fork/transformer_engine/pytorch/ops/op.py
git -C fork commit -qam "[PyTorch] Mine at end

Signed-off-by: Tester <t@example.com>"
ts export 2>&1 | tail -1                       # writes patches/0012-PyTorch-Mine-at-end.patch
rm patches/0012-PyTorch-Mine-at-end.patch      # accident, before git add
echo "== export"; ts export 2>&1 | tail -1
echo "== advice 1: git checkout"; git checkout -- patches/0012-PyTorch-Mine-at-end.patch; echo rc=$?
echo "== advice 2: remove the line"; sed -i "/0012-PyTorch-Mine/d" patches/series
ts export 2>&1 | tail -1
