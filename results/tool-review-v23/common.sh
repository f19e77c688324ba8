# Shared setup for the reproducers: a fresh clone of the tool and of TE under $W, a cache
# with copies of the wheels, and an applied fork/. Source it: `. common.sh NAME`.
set -u
W=/tmp/te-series-repro-${1:-x}
rm -rf "$W"; mkdir -p "$W/cache/dist"
cp ~/.cache/te-series/dist/transformer_engine-2.*-py3-none-any.whl "$W/cache/dist/"
export TE_SERIES_CACHE="$W/cache"
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$W/te"
git clone -q /work/tool-try-v23 "$W/tool"
cd "$W/tool"
export PYTHONPATH="$W/tool/src"
git config user.name "Rep Ro"; git config user.email "rep@ro.org"
ts() { python3 -m te_series "$@"; }
ts apply --te-src "$W/te" >/dev/null 2>&1 || { echo "setup: apply failed"; exit 1; }
git -C fork config user.name "Rep Ro"; git -C fork config user.email "rep@ro.org"
