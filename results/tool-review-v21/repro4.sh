#!/usr/bin/env bash
# Finding 4: after a notes-only edit of a patch file (committed), export of any change to
# that patch's commit is refused as if it would undo the notes (it would not: export keeps
# them); the ways out are a rebuild of fork/ or "the same change in fork/" (impossible for
# notes).
. "$(dirname "$0")/prelude.sh" r4 >/dev/null
cd "$P"
ts apply --te-src "$TE" >/dev/null 2>&1
f=$(ls patches/0011*)
python3 - "$f" <<'PY'
import sys
p = sys.argv[1]; d = open(p, 'rb').read(); i = d.index(b"\n---\n") + 5
open(p, 'wb').write(d[:i] + b"Reviewer notes: the example runs on CPU.\n\n" + d[i:])
PY
git commit -qam "patches: reviewer notes on 0011"
( cd fork && echo "# more" >> docs/examples/op_fuser/moe_channels.py && git commit -q --amend --no-edit -a )
ts export 2>&1 | grep -v unchanged
# For comparison: the same export, had an export run between the notes commit and the
# amend, writes the change and keeps the notes.
