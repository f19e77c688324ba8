# Shared setup for the reproducers (sourced). Makes a private world under $T.
set -e
DIST=$HOME/.cache/te-series/dist
T=$(mktemp -d /tmp/trv30.XXXXXX); trap 'rm -rf "$T"' EXIT
export HOME=$T/home; mkdir -p "$HOME"
git config --global user.name "Me Dev"; git config --global user.email me@corp.org
git config --global init.defaultBranch main
git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$T/te"
mkdir -p "$T/cache" && cp -al "$DIST" "$T/cache/dist"
export TE_SERIES_CACHE=$T/cache
git clone -q /work/tool-try-v30 "$T/me"
git clone -q "$T/me" "$T/col"            # the colleague's checkout of the same project
ts() { local d=$1; shift; (cd "$d" && PYTHONPATH=$PWD/src python3 -m te_series "$@"); }
# sub FILE OLD NEW: replace exactly one occurrence of OLD by NEW in FILE (python, literal)
sub() { python3 - "$@" <<'PY'
import sys; f, a, b = sys.argv[1:4]; s = open(f).read()
assert s.count(a) == 1, (f, a, s.count(a)); open(f, "w").write(s.replace(a, b))
PY
}
# fixup TREE SUBJECT-REGEX: commit the work tree's edits into the series commit with that subject
fixup() { local c; c=$(git -C "$1" log --format=%H --grep="$2" -n1)
  git -C "$1" commit -qam "fixup! $(git -C "$1" log --format=%s -n1 $c)"
  GIT_SEQUENCE_EDITOR=: git -C "$1" rebase -q -i --autosquash "$c~1" >/dev/null; }
cleanup() { rm -rf "$T"; }
