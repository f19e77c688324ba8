#!/bin/bash
# Finding 11: in a non-English git (LANGUAGE=de), apply's stop loses the file and hunk (it
# prints git apply's progress lines instead) and passes on git am's own "run git am
# --continue / --skip / --abort" hints, which the tool filters out in English.
. "$(dirname "$0")/prelude.sh" 11
export LANGUAGE=de LC_ALL=C.UTF-8
# an upstream commit that conflicts with patch 0009 in identity.py (and has #3410)
git -C "$W/te" checkout -q -b up2 d0067d0da
python3 -c "import zipfile,sys; open(sys.argv[2],'wb').write(zipfile.ZipFile(sys.argv[1]).read('transformer_engine/pytorch/ops/fuser.py'))" \
  "$TE_SERIES_CACHE/dist/transformer_engine-2.20.2-py3-none-any.whl" "$W/te/transformer_engine/pytorch/ops/fuser.py"
sed -i 's/    """Return input tensor"""/    """Return input tensor"""\n\n    _upstream_flag = True/' "$W/te/transformer_engine/pytorch/ops/basic/identity.py"
git -C "$W/te" commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
sed -i "s/^commit = \".*\"/commit = \"$(git -C "$W/te" rev-parse up2)\"/" patches/base.toml && git commit -qam "base up2"
ts apply --te-src "$W/te" 2>&1 | grep -v '^\[te-series' | head -16
echo "== same in English:"; LANGUAGE= LC_ALL=C ts apply --force --te-src "$W/te" 2>&1 | grep -v '^\[te-series' | grep -v '^kept' | head -3
