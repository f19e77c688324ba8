#!/bin/bash
# rebase refuses an untracked fork/ file where the new upstream commit adds a file; one of its
# three ways on (list it in info/exclude) only leads to a second refusal (ignored file).
cd /tmp; export T=/tmp/try39-r2-$$
source /work/tool-review-v39/common.sh >/dev/null 2>&1; source /work/tool-review-v39/upstream.sh
ts apply --te-src $T/te-src >/dev/null 2>&1; mk_upstream
echo "new upstream file" > $T/te-src/NEWFILE.md; git -C $T/te-src add NEWFILE.md; git -C $T/te-src commit -qm "Upstream: add NEWFILE"
echo "my draft" > $T/proj/fork/NEWFILE.md
echo "== rebase (1)"; ts rebase --onto main --te-src $T/te-src 2>&1 | grep -v '^\[te-series'
echo NEWFILE.md >> $T/proj/fork/.git/info/exclude
echo "== rebase (2), after listing it in info/exclude as advised"; ts rebase --onto main --te-src $T/te-src 2>&1 | grep -v '^\[te-series'
cleanup
