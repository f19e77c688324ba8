# shared set-up for the reproducers: a clone of the tool, a TE clone, a private cache, a fresh HOME,
# and `apply --te-src` done.  T defaults to /tmp/te-r28-<pid>; delete it afterwards (~700 MB).
set -e
T=${T:-/tmp/te-r28-$$}
rm -rf "$T"; mkdir -p "$T/cache/dist" "$T/home"
cp ~/.cache/te-series/dist/*.whl "$T/cache/dist/"
git clone -q /work/tool-try-v28 "$T/proj"
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$T/te-src"
export HOME="$T/home"
git config --global user.name Tester; git config --global user.email tester@corp.org
git -C "$T/te-src" config user.name Up; git -C "$T/te-src" config user.email up@x.y
export TE_SERIES_CACHE="$T/cache" PYTHONPATH="$T/proj/src"
P="$T/proj"; F="$T/proj/fork"
ts() { (cd "$P" && python3 -m te_series "$@"); }
tsk() { (cd "$P" && python3 /work/tool-review-v28/killer.py "$@"); }
BASE=d0067d0da6cb01811b8072a7d304f0e00344ce2b
git -C "$T/te-src" checkout -q $BASE 2>/dev/null
ts apply --te-src "$T/te-src" >/dev/null 2>&1
# edit_commit SUBJECT-REGEX CMD: stop git rebase -i at that series commit, run CMD in fork/, continue
edit_commit() {
  (cd "$F" && GIT_SEQUENCE_EDITOR="sed -i '/$1/s/^pick/edit/'" git rebase -q -i HEAD~11 >/dev/null 2>&1 &&
   eval "$2" && git rebase --continue >/dev/null 2>&1)
}
set +e
