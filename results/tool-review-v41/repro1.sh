#!/bin/bash
# A colleague adds a new patch (committed, listed in series); I make "the same change in fork/"
# as export's refusal advises (git am of that very file, noted as export itself tells) -> export still refuses.
export T=/tmp/try41-r1-$$
source "$(dirname "$0")/common.sh"
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
# colleague's patch: plain git format-patch of a commit on top of the series
git clone -q fork $T/scratch; git -C $T/scratch checkout -q series
echo "# colleague" >> $T/scratch/README.rst
git -C $T/scratch commit -qam "[PyTorch] Colleague change

Signed-off-by: C <c@example.org>"
git -C $T/scratch format-patch -q -1 --zero-commit -o $T/proj/patches/ --start-number 12
echo 0012-PyTorch-Colleague-change.patch >> patches/series
git add patches; git commit -qm "pull: colleague patch"
# my unexported commit in fork/
(cd fork && echo "# mine" >> setup.py && git commit -qam "[PyTorch] My own change

Signed-off-by: Tester <t@example.com>")
echo "### export:"; ts export 2>&1 | tail -3
# follow "make the same change in fork/": am the very file below my commit, note it as export asks
MINE=$(git -C fork rev-parse HEAD)
git -C fork reset -q --hard HEAD~1
git -C fork am -q --keep-non-patch -3 ../patches/0012-PyTorch-Colleague-change.patch
git -C fork notes --ref=te-series add -f -m 0012-PyTorch-Colleague-change.patch HEAD
git -C fork cherry-pick $MINE >/dev/null
git -C fork log --oneline -3
echo "### export after making the same change in fork/:"; ts export --dry-run 2>&1 | tail -4
echo "### what export would change in 0012 (format-patch of that commit, tool options):"
git -C fork format-patch -1 --stdout --zero-commit --full-index --no-signature HEAD~1 | diff - patches/0012-PyTorch-Colleague-change.patch
