#!/bin/bash
# Finding 13: rebase killed (SIGKILL) between its writes of patches/ and base.toml, then
# `te-series rebase --abort`: "fork/ is back on the series", but patches/ keeps the half of
# the rebase's write (a patch made for the new base, base.toml on the old one) and a
# .base.toml.te-series-tmp; neither is mentioned.
. "$(dirname "$0")/prelude.sh" 13
git -C "$W/te" checkout -q -b up3 d0067d0da
python3 -c "import zipfile,sys; open(sys.argv[2],'wb').write(zipfile.ZipFile(sys.argv[1]).read('transformer_engine/pytorch/ops/fuser.py'))" \
  "$TE_SERIES_CACHE/dist/transformer_engine-2.20.2-py3-none-any.whl" "$W/te/transformer_engine/pytorch/ops/fuser.py"
git -C "$W/te" commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
echo "# upstream note" >> "$W/te/transformer_engine/pytorch/ops/basic/bias.py"; git -C "$W/te" commit -qam "[PyTorch] Upstream change"
ts apply --te-src "$W/te" >/dev/null 2>&1
# kill the tool at its 3rd rename: patches/0009 replaced, base.toml not yet
PYTHONPATH="$W/proj/src" strace -o /dev/null -e trace=rename -e inject=rename:signal=SIGKILL:when=3 \
  python3 -m te_series rebase --onto up3 --te-src "$W/te" >/dev/null 2>&1; echo "rc=$?"
ts rebase --abort
git status --short
git diff patches/ | grep '^[-+]index' | head -2
