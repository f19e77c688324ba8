#!/bin/bash
# A note at the very end of a patch file, after its last hunk, without a final newline:
# git am takes the file; export, with fork/ unchanged, rewrites the patch without the note.
cd /tmp && source /work/tool-review-v40/common.sh || exit 1
trap cleanup EXIT
cd $T/proj
P=patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
printf 'NOTE-EOF: ask whether L0 is the right stage' >> $P
git commit -qam "note at the end of 0011 (no final newline)"
ts apply --te-src $T/te-src 2>&1 | tail -2
ts export 2>&1 | grep -v unchanged
git diff --stat; git diff | tail -3
