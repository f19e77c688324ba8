# Shared prelude: a fresh scratch project, TE clone and private wheel cache.
# Usage: . prelude.sh NAME   -> sets $P (project), $TE (TE clone), ts() runs the tool in $P.
set -u
N=${1:-x}
W=/tmp/h41r-$N
rm -rf "$W"; mkdir -p "$W/cache/dist"
cp ~/.cache/te-series/dist/transformer_engine-2.20.2-py3-none-any.whl "$W/cache/dist/"
cp ~/.cache/te-series/dist/transformer_engine-2.19.0-py3-none-any.whl "$W/cache/dist/" 2>/dev/null || true
export TE_SERIES_CACHE=$W/cache
git clone -q "${TS_SRC:-/work/h41}" "$W/proj"
git -C "$W/proj" checkout -q "${TS_REV:-HEAD}"
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$W/te"
P=$W/proj; TE=$W/te
git -C "$P" config user.name "Tester"; git -C "$P" config user.email "tester@corp.io"
ts() { (cd "$P" && PYTHONPATH="$P/src" python3 -m te_series "$@"); }
# check needs black/pylint/vermin: a venv that has them (read only)
VPY=${VPY:-/work/main/.venv/bin/python}
tsv() { (cd "$P" && PYTHONPATH="$P/src" "$VPY" -m te_series "$@"); }
