#!/bin/bash
# R5: text of yours after the diff of a patch file (a "-- " signature block, a trailing note)
# is dropped by an export that changes nothing in fork/.
. "$(dirname "$0")/prelude.sh"
f=patches/0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch
printf -- '-- \nReviewed-on: https://example.invalid/r/123 (a note of mine after the diff)\n' >> $f
git commit -qam "note after the diff of 0003"
ts apply --te-src $TE >/dev/null 2>&1 || echo apply failed
ts export | grep -v unchanged
git diff -U1 -- $f
