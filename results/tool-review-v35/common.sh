# common setup for te-series v35 reproducers (source it; call cleanup at the end)
set -u
T=/tmp/try35-$$
mkdir -p $T/cache $T/home
cp -al ~/.cache/te-series/dist $T/cache/dist
git clone -q /work/tool-try-v35 $T/proj
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $T/te-src
git -C $T/te-src checkout -q d0067d0da6cb01811b8072a7d304f0e00344ce2b
export HOME=$T/home TE_SERIES_CACHE=$T/cache PYTHONPATH=$T/proj/src
git config --global user.name "Test User"
git config --global user.email "test@corp.dev"
git -C $T/te-src config user.name "Test User"
git -C $T/te-src config user.email "test@corp.dev"
ts() { (cd $T/proj && python3 -m te_series "$@"); }
F="git -C $T/proj/fork"
c() { git -C $T/proj/fork log --format=%h --grep="$1" -1 series; }   # commit by subject words
pn() { ls $T/proj/patches | grep "^$1-"; }                             # patch file by number
# text of the user's own below '---' in patch NN (kept by export, README promise)
user_note() { python3 - "$T/proj/patches/$(pn $1)" "$2" <<'PY'
import sys
p, t = sys.argv[1], sys.argv[2]; b = open(p).read(); i = b.index('\n---\n') + 5
open(p, 'w').write(b[:i] + t + '\n\n' + b[i:])
PY
}
cleanup() { cd /; mountpoint -q $T/mnt 2>/dev/null && umount $T/mnt; rm -rf "$T"; }
