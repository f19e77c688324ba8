set -u
T=${T:-/tmp/try41-$$}
mkdir -p $T/cache $T/home
[ -e $T/cache/dist ] || cp -al ~/.cache/te-series/dist $T/cache/dist     # hard-linked wheels (TE 2.20.2, 2.19.0); never modify them
git clone -q /work/tool-try-v41 $T/proj
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $T/te-src
git -C $T/te-src checkout -q d0067d0da6cb01811b8072a7d304f0e00344ce2b
export HOME=$T/home TE_SERIES_CACHE=$T/cache PYTHONPATH=$T/proj/src
git config --global user.name Tester; git config --global user.email t@example.com
git -C $T/te-src config user.name Tester; git -C $T/te-src config user.email t@example.com
ts() { (cd $T/proj && python3 -m te_series "$@"); }
cleanup() { cd /; mountpoint -q $T/mnt 2>/dev/null && umount $T/mnt; rm -rf "$T"; }
