#!/bin/bash
# Finding 1 through rebase: a note after a file's hunks added after apply; the new upstream
# commit has that file's change, so the patch changes it no more. rebase's checks pass, fork/
# moves, then export refuses ("rebuild fork/"); `rebase --continue` repeats the refusal.
cd /tmp && source /work/tool-review-v40/common.sh || exit 1
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
P=patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
printf 'NOTE-QA: ask whether L0 is the right stage\n' >> $P; git commit -qam "note after the qa hunk of 0011"
cd $T/te-src && git checkout -q -b up d0067d0
sed -i '/test_fusible_ops.py" *$/a python3 $TE_PATH/docs/examples/op_fuser/moe_channels.py || test_fail "docs/examples/op_fuser/moe_channels.py"' qa/L0_pytorch_unittest/test.sh
git commit -qam "Run the MoE example in L0 (#9999)"; cd $T/proj
echo "== rebase:"; ts rebase --onto up --te-src $T/te-src 2>&1 | tail -2 | cut -c1-700
echo "== status:"; ts status 2>&1 | sed -n 3p
echo "== rebase --continue:"; ts rebase --continue 2>&1 | tail -2 | cut -c1-200
