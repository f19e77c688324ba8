# Shared setup for the repro scripts: a scratch clone of this project, a TE checkout
# and a private copy of the wheel cache. Usage: . prelude.sh NAME
set -u
N=$1
W=/tmp/h36r$N
rm -rf "$W" && mkdir -p "$W"
git clone -q /work/h36 "$W/proj"
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$W/te"
mkdir -p "$W/cache/dist" && cp ~/.cache/te-series/dist/transformer_engine-2.20.2-py3-none-any.whl "$W/cache/dist/"
export TE_SERIES_CACHE="$W/cache"
cd "$W/proj"
git config user.name t; git config user.email t@example.invalid
ts() { PYTHONPATH="$W/proj/src" python3 -m te_series "$@"; }
