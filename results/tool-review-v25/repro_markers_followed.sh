#!/bin/bash
# rebase conflict, conflict markers committed by mistake; follow the tool's advice literally
source /work/tool-review-v25/common.sh; source /work/tool-review-v25/lib_conflict.sh; source /work/tool-review-v25/lib_resolve.sh; set +e
ts apply --te-src $TE >/dev/null 2>&1
make_conflict_branch
ts rebase --onto conflict --te-src $TE >/dev/null 2>&1
git -C $T/fork add -A; msg=$(ts rebase --continue 2>&1); echo "$msg" | tail -2
id=$(echo "$msg" | grep -o "rebase -i [0-9a-f]*^" | head -1 | sed "s/rebase -i //; s/\^//"); echo id=$id
cd $T; GIT_SEQUENCE_EDITOR="sed -i \"s/^pick ${id:0:7}/edit ${id:0:7}/\"" git -C fork rebase -i $id^; echo rc=$?
f=transformer_engine/pytorch/ops/basic/add_extra_input.py; grep -c "<<<<<<<" fork/$f; resolve_markers fork/$f; git -C fork add $f; git -C fork commit --amend --no-edit -q; git -C fork -c commit.cleanup=whitespace -c commit.status=false rebase --continue; echo rc=$?
ts rebase --continue; echo rc=$?; ts status; git status --short; git -C fork log --format="%h %s | %N" --notes=te-series -12 | grep -v "^$"
