#!/usr/bin/env bash
# Finding 3: rebase --abort takes your uncommitted edits in patches/ for a half-written
# rebase ("killed?") and tells you to `git checkout HEAD --` them, whenever base.toml (as
# committed) already names the commit the rebase went to, as after a pull of a colleague's
# rebase (te-series' own advice then is: te-series rebase --onto <that commit>).
. "$(dirname "$0")/prelude.sh" r3 >/dev/null
cd "$P"
ts apply --te-src "$TE" >/dev/null 2>&1
# upstream moves README.rst (no file of the series)
( cd "$TE" && git checkout -q -b up-readme d0067d0da6cb01811b8072a7d304f0e00344ce2b &&
  sed -i '1s/^/Upstream line.\n/' README.rst && git -c user.name=U -c user.email=u@x.io commit -qam "upstream: README" )
Y=$(git -C "$TE" rev-parse up-readme)
# a commit of yours in fork/, not exported yet, that touches README.rst too
( cd fork && sed -i '1s/^/My line.\n/' README.rst && git commit -qam "[Docs] Say hello in the README

Body.

Signed-off-by: Tester <tester@corp.io>" )
# a colleague rebased onto Y and pushed; you pull (only base.toml changes: Y touches no series file)
sed -i "s/d0067d0da6cb01811b8072a7d304f0e00344ce2b/$Y/" patches/base.toml
git commit -qam "pull: base.toml moved to Y (colleague's rebase)"
ts export --dry-run 2>&1 | tail -1          # te-series' own advice: rebase --onto Y
# your uncommitted notes in a patch file
f=$(ls patches/0003*)
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; d = open(p, 'rb').read(); i = d.index(b"\n---\n") + 5
open(p, 'wb').write(d[:i] + b"Reviewer notes: v16 keeps the lock for directly built fusers.\n\n" + d[i:])
PY
ts rebase --onto "$Y" --te-src "$TE" 2>&1 | tail -1   # stops at your README commit
ts rebase --abort
