# shared set-up for the reproducers: a clone of the tool, a TE clone, a private cache
set -e
T=${T:-/tmp/te-repro-$$}
rm -rf "$T"; mkdir -p "$T/cache/dist" "$T/home"
cp ~/.cache/te-series/dist/*.whl "$T/cache/dist/"
git clone -q /work/tool-try-v27 "$T/proj"
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$T/te-src"
export HOME="$T/home"
git config --global user.name Tester; git config --global user.email tester@corp.org
git -C "$T/te-src" config user.name Up; git -C "$T/te-src" config user.email up@x.y
export TE_SERIES_CACHE="$T/cache" PYTHONPATH="$T/proj/src"
ts() { (cd "$T/proj" && python3 -m te_series "$@"); }
BASE=d0067d0da6cb01811b8072a7d304f0e00344ce2b
# an upstream branch that edits a line patch 0003 changes (op_fuser.rst)
git -C "$T/te-src" checkout -q -b up-conflict $BASE
sed -i 's/^- Channel bindings are captured when an ``OperationFuser`` is$/- Channel bindings are CAPTURED when an ``OperationFuser`` is/' "$T/te-src/docs/examples/op_fuser/op_fuser.rst"
git -C "$T/te-src" commit -qam "upstream: docs tweak"
# an upstream branch with a clean change
git -C "$T/te-src" checkout -q -b up-clean $BASE
echo "upstream line" >> "$T/te-src/README.rst"
git -C "$T/te-src" commit -qam "upstream: readme"
git -C "$T/te-src" checkout -q $BASE 2>/dev/null
set +e
