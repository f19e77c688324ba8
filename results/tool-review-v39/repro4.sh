#!/bin/bash
# Minor wording: (a) pr says it "would overwrite" an edited file of a PR slug that no longer
# exists (it would delete it); (b) rebase --onto an older tag says "the --onto commit X at HEAD".
cd /tmp; export T=/tmp/try39-r4-$$
source /work/tool-review-v39/common.sh >/dev/null 2>&1; source /work/tool-review-v39/upstream.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
git -C $T/te-src tag old d0067d0~30
echo "== (b)"; ts rebase --onto old --te-src $T/te-src 2>&1 | grep -v '^\[te-series' | cut -c1-200
mk_upstream; ts rebase --onto main --te-src $T/te-src >/dev/null 2>&1; cd $T/proj || exit 1; git commit -qam rebased
ts pr --te-src $T/te-src --identity "Real Person <real@nvidia.com>" >/dev/null 2>&1
echo "my edit" >> pr-out/moe-example.md
sed -i 's/^# pr: moe-example on fixes/# pr: moe-docs on fixes/' patches/series; git mv patches/pr/moe-example.md patches/pr/moe-docs.md; git commit -qam slug
echo "== (a)"; ts pr --te-src $T/te-src --identity "Real Person <real@nvidia.com>" 2>&1 | grep -v '^\[te-series'
cleanup
