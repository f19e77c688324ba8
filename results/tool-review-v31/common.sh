# Shared setup for the reproducers (sourced). Makes a private world under $T; deleted on exit.
set -e
DIST=/root/.cache/te-series/dist
[ -d "$DIST" ] || DIST=$HOME/.cache/te-series/dist
T=$(mktemp -d /tmp/try31-XXXXXX); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/cache" "$T/home"
cp -al "$DIST" "$T/cache/dist"
export HOME=$T/home TE_SERIES_CACHE=$T/cache
git config --global user.name "Me Dev"; git config --global user.email me@corp.org
git config --global init.defaultBranch main
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$T/te-src"
git -C "$T/te-src" checkout -q d0067d0da6cb01811b8072a7d304f0e00344ce2b
git clone -q /work/tool-try-v31 "$T/me"
git clone -q "$T/me" "$T/col"            # a colleague's checkout of the same project
ts() { local d=$1; shift; case $d in /*) ;; *) d=$T/$d;; esac; (cd "$d" && PYTHONPATH=$PWD/src python3 -m te_series "$@"); }
# sub FILE OLD NEW: replace exactly one occurrence of OLD by NEW in FILE (literal)
sub() { python3 - "$@" <<'PY'
import sys; f, a, b = sys.argv[1:4]; s = open(f).read()
assert s.count(a) == 1, (f, a, s.count(a)); open(f, "w").write(s.replace(a, b))
PY
}
# fixup TREE SUBJECT-REGEX: commit the work tree's edits into the series commit with that subject
fixup() { local c; c=$(git -C "$1" log --format=%H --grep="$2" -n1)
  git -C "$1" commit -qam "fixup! $(git -C "$1" log --format=%s -n1 $c)"
  GIT_SEQUENCE_EDITOR=: git -C "$1" rebase -q -i --autosquash "$c~1" >/dev/null; }
