#!/bin/bash
# Finding 8: pr turns a carriage return inside a commit message into a line break (git's
# output is read in text mode, universal newlines), so the posted commit differs from the
# patch, which export and git am keep byte for byte.
. "$(dirname "$0")/prelude.sh" 8
# an upstream commit that has #3410 (pr refuses a base without it): the base + 2.20.2's fuser.py
git -C "$W/te" checkout -q -b up1 d0067d0da
python3 -c "import zipfile,sys; open(sys.argv[2],'wb').write(zipfile.ZipFile(sys.argv[1]).read('transformer_engine/pytorch/ops/fuser.py'))" \
  "$TE_SERIES_CACHE/dist/transformer_engine-2.20.2-py3-none-any.whl" "$W/te/transformer_engine/pytorch/ops/fuser.py"
git -C "$W/te" commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
ts apply --te-src "$W/te" >/dev/null 2>&1
echo ".. note" >> fork/docs/examples/op_fuser/op_fuser.rst
printf '[PyTorch] CR in a message\n\nLine with a\rcarriage return inside.\n\nSigned-off-by: A <a@example.com>\n' |
  git -C fork -c commit.cleanup=whitespace commit -q -a -F -
ts export | tail -1
git add patches && git commit -qm wip
ts rebase --onto up1 --te-src "$W/te" | tail -1 && git add patches && git commit -qm "onto up1"
ts pr --te-src "$W/te" --identity "Real Person <real@gmail.com>" --out "$W/pr-out" >/dev/null 2>&1; echo "pr rc=$?"
git -C "$W/te" fetch -q "$W/pr-out/pr.bundle" 'refs/heads/pr/*:refs/heads/pr/*'
echo "in the patch:";  grep -a 'carriage' patches/0011-*.patch | od -c | head -3
echo "in the PR branch:"; git -C "$W/te" log -1 --format=%B pr/moe-example | head -4 | od -c | sed -n 1,8p
