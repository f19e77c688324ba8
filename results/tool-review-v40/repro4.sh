#!/bin/bash
# A two-line note at the end of a patch file without a final newline, after the hunks of a file
# that fork/ splits off into a new commit which changes a later file too: export glues the
# note's last line onto that later file's `diff --git` line.
cd /tmp && source /work/tool-review-v40/common.sh || exit 1
trap cleanup EXIT
cd $T/proj
P=patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
printf 'NOTE1: ask whether L0 is the right stage\nNOTE2: or L1' >> $P
git commit -qam "note at the end of 0011 (no final newline)"
ts apply --te-src $T/te-src 2>&1 | tail -1
cd fork
git diff HEAD^ HEAD -- qa > ../qa.diff
git checkout -q HEAD^ -- qa && git commit -q --amend --no-edit        # 0011 without its qa change
git apply ../qa.diff && echo "# touch" >> tests/pytorch/test_fusible_ops.py
git commit -qam "[PyTorch] Run the example in L0

Signed-off-by: Tester <t@example.com>"; cd ..
ts export 2>&1 | grep -v unchanged
N=patches/0012-PyTorch-Run-the-example-in-L0.patch
grep -n 'NOTE\|^diff --git' $N
echo "== git am of the series as exported:"
git clone -q fork $T/check && git -C $T/check checkout -q HEAD~2 && git -C $T/check am -3 --keep-cr $T/proj/patches/0011-*.patch $T/proj/$N 2>&1 | tail -3
echo "files the new commit changes after git am:"; git -C $T/check show --stat --format= HEAD
echo "export again:"; git add -A patches; git commit -qm e1; ts export 2>&1 | grep -v unchanged
git diff | grep "^[-+]" | head -4
echo "== git am of the twice-exported patch:"
git -C $T/check reset -q --hard HEAD~1 && git -C $T/check am -3 --keep-cr $T/proj/$N 2>&1 | tail -4
git -C $T/check am --abort 2>/dev/null; true
