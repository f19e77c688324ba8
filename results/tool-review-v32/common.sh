# common setup for te-series v32 reproducers; source me
set -u
T=$(mktemp -d /tmp/try32-XXXXXX)
mkdir -p $T/cache $T/home
cp -al ~/.cache/te-series/dist $T/cache/dist
git clone -q /work/tool-try-v32 $T/proj
export HOME=$T/home TE_SERIES_CACHE=$T/cache PYTHONPATH=$T/proj/src
git config --global user.name "Tester"
git config --global user.email "tester@corp.dev"
git config --global init.defaultBranch main
git config --global advice.detachedHead false
make_te_src() {
  git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $T/te-src
  git -C $T/te-src checkout -q d0067d0da6cb01811b8072a7d304f0e00344ce2b
}
ts() { (cd $T/proj && python3 -m te_series "$@"); }
cleanup() { cd /; rm -rf "$T"; }
