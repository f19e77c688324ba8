#!/usr/bin/env bash
# Finding 1: a no-op export deletes hand-written notes below '---' from a line on that
# reads like a diffstat line (an indented line holding " | ").
. "$(dirname "$0")/prelude.sh" r1 >/dev/null
cd "$P"
f=$(ls patches/0003*.patch)
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; d = open(p, 'rb').read()
i = d.index(b"\n---\n") + 5
notes = (b"Notes for reviewers (not part of the commit):\n"
         b"  - timings per step, before | after\n"
         b"  - mlp: 41.0 us | 38.5 us\n"
         b"  - moe: 88.1 us | 80.2 us\n\n")
open(p, 'wb').write(d[:i] + notes + d[i:])
PY
git commit -qam "patches: reviewer notes below --- in 0003"
ts apply --te-src "$TE" >/dev/null 2>&1
ts export                      # fork/ unchanged: nothing should change
git diff --stat
git diff | grep '^-  '         # the notes lines export deleted

# Variant: hand-written text between the diffstat and the first 'diff --git' goes entirely.
. "$(dirname "$0")/prelude.sh" r1b >/dev/null
cd "$P"
f=$(ls patches/0003*.patch)
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; d = open(p, 'rb').read()
i = d.index(b"\ndiff --git ") + 1
open(p, 'wb').write(d[:i] + b"Changes since v14: reworded the second paragraph.\n\n" + d[i:])
PY
git commit -qam "patches: a changelog line after the diffstat of 0003"
ts apply --te-src "$TE" >/dev/null 2>&1
ts export | grep -v unchanged
git diff | grep '^-[^-]'
