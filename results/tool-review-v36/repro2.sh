#!/bin/bash
# Text after a file's hunks stays in the old patch (after another file) when that file's change
# is split out into a new commit; export says nothing.
T=/tmp/try36-r2-$$; source /work/tool-review-v36/common.sh; trap cleanup EXIT
cd $T/proj && F=$(ls patches/0011*)
printf 'TRAIL-NOTE about the qa/test.sh hunk\n' >> $F && git commit -qam "note after qa/test.sh's hunks"
ts apply --te-src $T/te-src >/dev/null 2>&1
cd fork && git reset -q --soft HEAD~1 && git reset -q HEAD -- qa/L0_pytorch_unittest/test.sh \
  && git commit -q -C ORIG_HEAD && git commit -q -a -s -m "[PyTorch] Run the MoE example in the L0 unit-test script" -m "Run it."
git notes --ref=te-series add -f -m 0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch HEAD~1  # as export's refusal advises
cd $T/proj && ts export | grep -v unchanged
for f in patches/001[12]*; do echo "== $f"; grep -n 'TRAIL-NOTE\|^diff --git' $f; done
