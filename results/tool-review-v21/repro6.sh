#!/usr/bin/env bash
# Finding 6: a rebase pick that git refuses because an untracked file of yours is in the
# way stops with advice saying --continue keeps "changes of yours to the patch's files" in
# a stash; --continue does not, and stops again with the same words, every time.
. "$(dirname "$0")/prelude.sh" r6 >/dev/null
cd "$P"
ts apply --te-src "$TE" >/dev/null 2>&1
( cd "$TE" && git checkout -q -b up-next d0067d0da6cb01811b8072a7d304f0e00344ce2b &&
  sed -i 's/    fusion is able to happen only with in_place=True\./    fusion is able to happen only with in_place=True (upstream edit)./' \
    transformer_engine/pytorch/ops/basic/make_extra_output.py &&
  git -c user.name=U -c user.email=u@x.io commit -qam "upstream: edit make_extra_output" )
ts rebase --onto up-next --te-src "$TE" >/dev/null 2>&1       # conflict in 0005
( cd fork && git checkout -q --theirs transformer_engine/pytorch/ops/basic/make_extra_output.py &&
  git add -u &&
  echo "my draft" > docs/examples/op_fuser/moe_channels.py )   # untracked; 0010 creates it
for i in 1 2 3; do
  echo "== te-series rebase --continue ($i)"
  ts rebase --continue 2>&1 | grep -v Rebasing | tail -3
done
git -C fork stash list | wc -l    # 0: nothing was put in a stash
