# common setup for te-series v33 reproducers; source it. Sets T, runs world setup.
set -u
T=${T:-$(mktemp -d /tmp/try33-XXXXXX)}
mkdir -p $T/cache $T/home
[ -e $T/cache/dist ] || cp -al ~/.cache/te-series/dist $T/cache/dist
[ -e $T/proj ] || git clone -q /work/tool-try-v33 $T/proj
if [ ! -e $T/te-src ]; then
  git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $T/te-src
  git -C $T/te-src checkout -q d0067d0da6cb01811b8072a7d304f0e00344ce2b
fi
export HOME=$T/home TE_SERIES_CACHE=$T/cache PYTHONPATH=$T/proj/src
git config --global user.name "Tester"
git config --global user.email "tester@nvidia.com"
git -C $T/te-src config user.name Tester; git -C $T/te-src config user.email tester@nvidia.com
ts() { (cd $T/proj && python3 -m te_series "$@"); }
cleanup() { cd /; rm -rf "$T"; }
fresh() { # reset project to the pristine clone state and re-apply on the git base
  (cd $T/proj && git reset -q --hard origin/HEAD && git clean -qfdx -e .venv && rm -rf fork fork.new fork-port .te-series-backup pr-out)
  ts apply --te-src $T/te-src >/dev/null 2>&1 || echo "fresh apply failed"
}
