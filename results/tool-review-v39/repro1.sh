#!/bin/bash
# A colleague's edit of patch 0003 and my own (unexported) fork/ edit touch adjacent lines.
# After I make the colleague's change in fork/ too (so fork/ holds both), export still
# refuses and insists on a rebuild that pushes my fork/ work into a backup.
cd /tmp; export T=/tmp/try39-r1-$$
source /work/tool-review-v39/common.sh >/dev/null 2>&1
source /work/tool-review-v39/edit3.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj || exit 1
# colleague (pulled, committed): line 1 of the comment in sequential.py
sed -i 's/^+        # Lock the channel bindings only once every fuser is built, so that$/+        # Lock the channel bindings once every fuser is built, so that/' $P3
git commit -qam "colleague: reword comment in 0003"
# me, in fork/ (not exported yet): line 2 of the same comment
amend3 transformer_engine/pytorch/ops/sequential.py 's/# an error leaves them unlocked/# an error leaves all ops unlocked/'
echo "== export (1)"; ts export 2>&1 | grep -v '^\[te-series'
# make the colleague's change in fork/ as well: fork/ now holds both changes
amend3 transformer_engine/pytorch/ops/sequential.py 's/# Lock the channel bindings only once every fuser is built, so that/# Lock the channel bindings once every fuser is built, so that/'
echo "== fork/ now:"; git -C fork show HEAD~8 -- transformer_engine/pytorch/ops/sequential.py | grep '^+ *#'
echo "== patch file now:"; grep '^+ *# ' $P3 | grep -A1 'Lock the channel'
echo "== export (2)"; ts export 2>&1 | grep -v '^\[te-series'
cleanup
