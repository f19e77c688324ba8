# Setup shared by the reproducers. Usage: source common.sh ; then use ts <verb> ...
set -u
T=$(mktemp -d /tmp/try34-XXXXXX)
mkdir -p $T/cache $T/home
cp -al ~/.cache/te-series/dist $T/cache/dist
export HOME=$T/home TE_SERIES_CACHE=$T/cache
git config --global user.name "Tess Ter"
git config --global user.email "tess@nvidia.com"
git clone -q /work/tool-try-v34 $T/proj
export PYTHONPATH=$T/proj/src
mk_te_src() {
  git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $T/te-src
  git -C $T/te-src checkout -q d0067d0da6cb01811b8072a7d304f0e00344ce2b
}
ts() { (cd $T/proj && python3 -m te_series "$@"); }
cleanup() { cd /; rm -rf "$T"; }
# an upstream branch of te-src that contains #3410, and the project rebased onto it (pr needs it)
mk_fakemain() {
  git -C $T/te-src checkout -q -b fakemain
  git -C $T/te-src show 25000027:transformer_engine/pytorch/ops/fuser.py >/dev/null 2>&1
  ( cd $T/te-src && unzip -p $T/cache/dist/transformer_engine-2.20.2-py3-none-any.whl \
      transformer_engine/pytorch/ops/fuser.py > transformer_engine/pytorch/ops/fuser.py &&
    git -c user.name=Up -c user.email=up@nvidia.com commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)" &&
    git checkout -q d0067d0da6cb01811b8072a7d304f0e00344ce2b )
  ts apply --te-src $T/te-src >/dev/null 2>&1
  ts rebase --onto fakemain --te-src $T/te-src >/dev/null 2>&1
  git -C $T/proj commit -qam "rebase onto fakemain"
}
