#!/bin/bash
# Finding 1: export silently discards a patch file's hand-written text that git am does not
# carry into the commit (here: reviewer notes below '---'), after telling the user that
# fork/ "holds" those edits.
. "$(dirname "$0")/prelude.sh" 1
P=patches/0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch
python3 - "$P" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read(); i = s.index('\n---\n') + 5
open(p, 'w').write(s[:i] + "Changes since v13 (for reviewers): the lock is now taken at the first\nfused call.\n\n" + s[i:])
PY
ts apply --te-src "$W/te" >/dev/null 2>&1       # fork/ made from the edited file
ts export; echo "export rc=$?"                     # refuses: "fork/ was made from these edits, so it holds them: commit them first"
git add patches && git commit -qm "0003: notes for reviewers"   # ... as told
ts export | grep -v unchanged; echo "export rc=$?"
git diff --stat; git diff | grep '^-Changes since' && echo "LOST: the notes are gone from $P"
