#!/bin/bash
# Text after 0011's qa hunks (PR moe-example); fork/ takes the qa change out of 0011 and an
# unrelated new commit after 0001 (PR fixes) changes the same file: the note goes there.
cd /tmp && source /work/tool-review-v40/common.sh || exit 1
trap cleanup EXIT
cd $T/proj
printf 'NOTE-QA: ask maintainers whether L0 is the right stage for the example\n' >> patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
git commit -qam "note qa"; ts apply --te-src $T/te-src >/dev/null 2>&1
cd fork; BASE=$(git rev-parse HEAD~11)
GIT_SEQUENCE_EDITOR="sed -i '1s/^pick/edit/'" git rebase -q -i $BASE >/dev/null 2>&1
sed -i '1a # a comment of the fixes PR' qa/L0_pytorch_unittest/test.sh
git commit -qam "[PyTorch] Mark the L0 script

Signed-off-by: Tester <t@example.com>"; git rebase --continue >/dev/null 2>&1
git checkout -q HEAD^ -- qa/L0_pytorch_unittest/test.sh && git commit -q --amend --no-edit; cd ..
ts export 2>&1 | grep -v 'rename\|unchanged'
echo "note now in: $(grep -l NOTE-QA patches/*.patch)"; sed -n '/^# pr: fixes/,/^$/p' patches/series
