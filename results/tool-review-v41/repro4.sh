#!/bin/bash
# The series changes after port --edit; export --port writes a port patch from the stale port tree,
# and status calls that tree complete. A fresh port tree then gives a different port patch.
export T=/tmp/try41-r4-$$
source "$(dirname "$0")/common.sh"
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
F=transformer_engine/pytorch/ops/__init__.py
ts port --edit >/dev/null 2>&1
(cd fork && sed -i '1i # series head' $F && git commit -qam "[PyTorch] Series head

Signed-off-by: Tester <t@example.com>")
ts export | grep -v unchanged; git add -A patches; git commit -qm "series head"
(cd fork-port/2.19.0 && echo "# port tweak" >> $F && git commit -qam "[PyTorch] Port tweak

Signed-off-by: Tester <t@example.com>")
echo "### status"; ts status | grep fork-port
echo "### export --port"; ts export --port 2.19.0; git add -A patches; git commit -qm "port patch"
grep '^index' patches/port/2.19.0/0001-*.patch
echo "### fresh port tree, export --port again:"
ts port --edit --force >/dev/null 2>&1
git -C fork-port/2.19.0 rev-parse HEAD~1:$F
ts export --port 2.19.0 --dry-run 2>&1 | tail -1
