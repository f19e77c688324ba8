#!/bin/bash
# Colleague adds a new patch in export's own format (committed, listed in series). I have an
# unexported commit in fork/; I make "the same change in fork/" (git am of that file on top,
# noted as export asks). Export renumbers it (0012 -> 0013, my commit takes 0012) and refuses:
# "changed since fork/ was made from it", though fork/ has exactly that change.
export T=/tmp/try41-r2-$$
source "$(dirname "$0")/common.sh"
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
# colleague: same repo, a commit on top of the series, exported by te-series itself
git clone -q . $T/coll; cp -a fork $T/coll/fork 2>/dev/null || true
(cd $T/coll && echo "# colleague" >> fork/README.rst && git -C fork commit -qam "[PyTorch] Colleague change

Signed-off-by: C <c@example.org>" && PYTHONPATH=$T/proj/src python3 -m te_series export >/dev/null && git add patches && git commit -qm "colleague: new patch")
git pull -q --no-rebase $T/coll HEAD 2>&1 | tail -1
tail -2 patches/series
# my unexported commit in fork/
(cd fork && echo "# mine" >> setup.py && git commit -qam "[PyTorch] My own change

Signed-off-by: Tester <t@example.com>")
echo "### export:"; ts export 2>&1 | tail -1 | cut -c1-200
# make the same change in fork/: am the colleague's file on top of mine, note it
git -C fork am -q --keep-non-patch -3 ../patches/0012-PyTorch-Colleague-change.patch
git -C fork notes --ref=te-series add -f -m 0012-PyTorch-Colleague-change.patch HEAD
git -C fork log --oneline -3
echo "### export after making the same change in fork/:"; ts export --dry-run 2>&1 | tail -5
