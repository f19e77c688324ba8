source $W/fresh.sh f4 >/dev/null
ts apply --te-src ../te >/dev/null 2>&1
ts rebase --onto conflict --te-src ../te >/dev/null 2>&1
cd fork
git checkout -q --theirs docs/examples/op_fuser/op_fuser.rst && git add -A
GIT_EDITOR=true git rebase --continue >/dev/null 2>&1
echo "# work" >> transformer_engine/pytorch/ops/__init__.py
git commit -qam "[PyTorch] my work"                              # a commit of mine on top
echo "# wip" >> transformer_engine/pytorch/ops/__init__.py      # and an uncommitted edit
cd ..
ts rebase --abort; echo "rc=$?"
ts status | tail -1
ts rebase --abort 2>&1 | head -1
