# common setup: source this. Sets W (experiment dir), T (tool clone), TE (TE clone), ts function
set -e
W=$(mktemp -d /tmp/tsv-XXXX)
git clone -q /work/tool-try-v25 $W/tool
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $W/te
mkdir -p $W/cache && cp -r ~/.cache/te-series/dist $W/cache/
export TE_SERIES_CACHE=$W/cache
export HOME=$W/home; mkdir -p $HOME
git config --global user.name "Tester"; git config --global user.email t@example.com
T=$W/tool; TE=$W/te
ts() { (cd $T && PYTHONPATH=$T/src python3 -m te_series "$@"); }
