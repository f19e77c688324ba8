# Shared prelude of the repro scripts: source it (. prelude.sh) from bash.
# - $W (default /tmp/h42w): a scratch TE clone ($TE) with two made-up upstream branches,
#   a private wheel cache ($TE_SERIES_CACHE; ~/.cache/te-series is only read, never written),
#   and a venv with check's tools (black 24.4.2, pylint 3.3.1, vermin 1.8.0);
# - a fresh clone of the te-series project at $P (cwd), and `ts` (`tsv`: with check's tools)
#   running the tool from that clone.
set -u
export W=${W:-/tmp/h42w}
export TE_SERIES_CACHE=$W/cache
H42=${H42:-/work/h43}
mkdir -p "$W/cache/dist"
for r in 2.20.2 2.19.0; do
  f=transformer_engine-$r-py3-none-any.whl
  [ -f "$W/cache/dist/$f" ] || cp ~/.cache/te-series/dist/$f "$W/cache/dist/"
done
if [ ! -d "$W/te" ]; then
  git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$W/te"
  ( cd "$W/te" && B=d0067d0da6cb01811b8072a7d304f0e00344ce2b &&
    git checkout -q -b up-conflict $B &&           # upstream edited a line patch 0002 changes
    sed -i '615s/$/  # upstream edit/' tests/pytorch/test_fusible_ops.py &&
    git -c user.name=U -c user.email=u@x commit -qam "upstream: edit test" &&
    git checkout -q -b up-clean $B &&              # an upstream commit no patch touches
    echo "# x" >> README.rst && git -c user.name=U -c user.email=u@x commit -qam "upstream: readme" &&
    git checkout -q main )
fi
TE=$W/te
P=$(mktemp -d /tmp/h42rN.XXXXXX)/proj
git clone -q "$H42" "$P"
git -C "$P" checkout -q ${REV:-HEAD}
cd "$P"
ts() { PYTHONPATH="${SRC:-$P/src}" python3 -m te_series "$@"; }
[ -x "$W/venv/bin/python" ] || { python3 -m venv "$W/venv" && "$W/venv/bin/pip" install -q black==24.4.2 pylint==3.3.1 vermin==1.8.0 2>/dev/null; }
tsv() { PYTHONPATH="$P/src" "$W/venv/bin/python" -m te_series "$@"; }
