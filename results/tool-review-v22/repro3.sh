#!/bin/bash
# R3: a patch file whose mail header git am rejects (no From: line; or a mistyped Date:) is
# reported as "not the patch" (kind io), and `apply --continue` -- what the stop and status
# say to do -- runs the same am again, forever.
. "$(dirname "$0")/prelude.sh"
f=patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
sed -i '2,3d' $f     # drop the (folded) From: header; `sed -i '1,5s/^Date: .*/Date: someday/'` does the same
head -3 $f; git commit -qam "0011 without an author line"
ts apply --te-src $TE 2>&1 | grep -v '^\[te'
for i in 1 2; do echo "== apply --continue #$i"; ts apply --continue 2>&1 | grep -v '^\[te' | tail -1; done
ts status | tail -2
