#!/bin/bash
# An untracked draft in patches/ under the name a new fork/ commit would get. export's first
# advice for it is "git mv, or git rm ... commit that", which git refuses for an untracked
# file; the second message of the same refusal gives a way that works.
. /work/tool-review-v30/common.sh
trap cleanup EXIT
ts "$T/me" apply --te-src "$T/te" >/dev/null 2>&1
echo ".. note:: x" >> "$T/me/fork/docs/examples/op_fuser/op_fuser.rst"
git -C "$T/me/fork" commit -qam "[Docs] Add x

Signed-off-by: Me Dev <me@corp.org>"
echo "my draft" > "$T/me/patches/0012-Docs-Add-x.patch"
ts "$T/me" export || true
echo "=== following the first advice literally:"
(cd "$T/me" && git mv patches/0012-Docs-Add-x.patch /tmp/ 2>&1; git rm -q patches/0012-Docs-Add-x.patch 2>&1) || true
