#!/bin/bash
# Finding 10: export --port writes port patches from a port tree built on an older version
# of the series (status calls it complete); with the current series they no longer apply.
. "$(dirname "$0")/prelude.sh" 10
cp /tmp/h36cache/dist/transformer_engine-2.19.0-py3-none-any.whl "$TE_SERIES_CACHE/dist/" 2>/dev/null
ts apply --te-src "$W/te" >/dev/null 2>&1
ts port --edit --release 2.19.0 2>&1 | tail -1
# a port patch
sed -i '0,/^class Identity/s//# Port note for 2.19.0.\nclass Identity/' fork-port/2.19.0/transformer_engine/pytorch/ops/basic/identity.py
git -C fork-port/2.19.0 commit -qam "[PyTorch] Port: note on Identity

For 2.19.0.

Signed-off-by: t <t@gmail.com>"
ts export --port 2.19.0 | tail -1; git add -A patches && git commit -qm "port patch"
# the series changes the same lines (edit in fork/, export)
sed -i '0,/^class Identity/s//# Series note.\nclass Identity/' fork/transformer_engine/pytorch/ops/basic/identity.py
git -C fork commit -q -a --fixup=HEAD~1
base=$(python3 -c "import json; print(json.load(open('fork/.git/te-series/state.json'))['base'])")
GIT_SEQUENCE_EDITOR=true git -C fork rebase -q -i --autosquash "$base"
ts export | grep -v unchanged; git commit -qam "series change"
echo "== status:"; ts status | grep -A0 fork-port
# another port commit in the stale port tree: exported without a word
echo "# more" >> fork-port/2.19.0/transformer_engine/pytorch/ops/basic/identity.py
git -C fork-port/2.19.0 commit -qam "[PyTorch] Port: more

More.

Signed-off-by: t <t@gmail.com>"
ts export --port 2.19.0; echo "export --port rc=$?"; git add -A patches && git commit -qm "port more"
echo "== port:"; ts port 2>&1 | grep -v '^\[te-series' | head -2
