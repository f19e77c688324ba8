#!/bin/bash
# port --edit --force stops on a port patch; meanwhile the series changes (a new commit in fork/,
# exported and committed) in a file the port patch touches; apply --continue --port does not
# notice, and export --port writes a port patch against the old series.
export T=/tmp/try41-r3-$$
source "$(dirname "$0")/common.sh"
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
F=transformer_engine/pytorch/ops/__init__.py
ts port --edit >/dev/null 2>&1
(cd fork-port/2.19.0 && echo "# port tweak" >> $F && git commit -qam "[PyTorch] Port tweak for 2.19.0

Signed-off-by: Tester <t@example.com>")
ts export --port 2.19.0 >/dev/null; git add -A patches; git commit -qm "port patch"
(cd fork && echo "# series tail" >> $F && git commit -qam "[PyTorch] Series tail

Signed-off-by: Tester <t@example.com>")
ts export >/dev/null; git add -A patches; git commit -qm "series tail"
echo "### port --edit --force (stops on the port patch)"; ts port --edit --force 2>&1 | grep -E "Patch failed|Go on"
# meanwhile: one more series commit touching the same file, exported and committed
(cd fork && sed -i '1i # series head' $F && git commit -qam "[PyTorch] Series head

Signed-off-by: Tester <t@example.com>")
ts export | grep -v unchanged; git add -A patches; git commit -qm "series head"
# resolve the port conflict, keep both
python3 - fork-port/2.19.0.new/$F <<'PY'
import sys,re
p=sys.argv[1]; s=open(p).read()
s=re.sub(r'<<<<<<<[^\n]*\n(.*?)=======\n(.*?)>>>>>>>[^\n]*\n', lambda m: m.group(1)+m.group(2), s, flags=re.S)
open(p,'w').write(s)
PY
git -C fork-port/2.19.0.new add -A
echo "### apply --continue --port 2.19.0"; ts apply --continue --port 2.19.0 2>&1 | grep -v kept: ; echo rc=$?
echo "### status"; ts status
echo "### fork-port has the 'Series head' change?"; head -1 fork-port/2.19.0/$F; git -C fork-port/2.19.0 log --oneline | grep -c "Series head"
ts export --port 2.19.0; git add -A patches; git commit -qm "port refreshed"
echo "### a fresh port of the committed patches/:"; ts port --out $T/pout 2>&1 | tail -4
echo "### the port patch's pre-image vs. a fresh port tree:"
grep '^index' patches/port/2.19.0/0001-*.patch
ts port --edit --force >/dev/null 2>&1
git -C fork-port/2.19.0 rev-parse HEAD~1:$F
git -C fork-port/2.19.0 log --format=%s -1 HEAD
ts export --port 2.19.0 --dry-run 2>&1 | tail -2
