set -u
T=${T:-/tmp/try42-$$}
mkdir -p $T/cache $T/home
[ -e $T/cache/dist ] || cp -al ~/.cache/te-series/dist $T/cache/dist     # hard-linked wheels (TE 2.20.2, 2.19.0); never modify them
git clone -q /work/tool-try-v42 $T/proj
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo $T/te-src
git -C $T/te-src checkout -q d0067d0da6cb01811b8072a7d304f0e00344ce2b
export HOME=$T/home TE_SERIES_CACHE=$T/cache PYTHONPATH=$T/proj/src
git config --global user.name Tester; git config --global user.email t@example.com
git -C $T/te-src config user.name Tester; git -C $T/te-src config user.email t@example.com
ts() { (cd $T/proj && python3 -m te_series "$@"); }
cleanup() { cd /; mountpoint -q $T/mnt 2>/dev/null && umount $T/mnt; rm -rf "$T"; }
# sha of fork commit (in repo $1) whose subject matches $2, above upstream
csha() { git -C "$1" log --format='%H %s' -n 20 HEAD | grep -- "$2" | head -1 | cut -d" " -f1; }
# run shell $3 at commit matching $2 in repo $1 (stops at it with edit, runs, amends, continues)
at_commit() { local c; c=$(csha "$1" "$2"); [ -n "$c" ] || { echo "no commit $2"; return 1; }
  GIT_SEQUENCE_EDITOR="sed -i \"s/^pick ${c:0:7}/edit ${c:0:7}/\"" git -C "$1" rebase -q -i "$c~1" >/dev/null 2>&1
  (cd "$1" && eval "$3") && git -C "$1" rebase --continue >/dev/null; }
