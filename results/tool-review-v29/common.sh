# shared set-up for the reproducers: a clone of the tool, a TE clone (with branch up3410 = base +
# 2.20.2's fuser.py as "Reduce Grouped MLP Fuser CPU Overhead (#3410)"), a private cache, a fresh
# HOME, and `apply --te-src` done.  T defaults to /tmp/te-r29-<pid>; delete it afterwards (~700 MB).
set -e
T=${T:-/tmp/te-r29-$$}
rm -rf "$T"; mkdir -p "$T/cache" "$T/home"
cp -al ~/.cache/te-series/dist "$T/cache/dist"
git clone -q /work/tool-try-v29 "$T/proj"
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$T/te-src"
export HOME="$T/home"
git config --global user.name Tester; git config --global user.email tester@corp.org
git -C "$T/te-src" config user.name Up; git -C "$T/te-src" config user.email up@x.y
export TE_SERIES_CACHE="$T/cache" PYTHONPATH="$T/proj/src"
P="$T/proj"; F="$T/proj/fork"
ts() { (cd "$P" && python3 -m te_series "$@"); }
BASE=d0067d0da6cb01811b8072a7d304f0e00344ce2b
git -C "$T/te-src" checkout -q $BASE 2>/dev/null
ts apply --te-src "$T/te-src" >/dev/null 2>&1
# edit_commit SUBJECT-REGEX CMD: stop git rebase -i at that series commit, run CMD in fork/, continue
edit_commit() {
  (cd "$F" && GIT_SEQUENCE_EDITOR="sed -i '/$1/s/^pick/edit/'" git rebase -q -i HEAD~11 >/dev/null 2>&1 &&
   eval "$2" && git rebase --continue >/dev/null 2>&1)
}
# colleague DIR: a colleague's clone of the project with its own fork/ applied
colleague() {
  git clone -q "$P" "$1"; (cd "$1" && PYTHONPATH="$1/src" python3 -m te_series apply --te-src "$T/te-src" >/dev/null 2>&1)
}
cts() { local d=$1; shift; (cd "$d" && PYTHONPATH="$d/src" python3 -m te_series "$@"); }
set +e
