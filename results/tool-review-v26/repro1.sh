#!/bin/bash
# rebase --continue stashes a user's untracked draft where a patch creates a file, and says
# "git -C fork stash pop brings them back once the patch is in": that pop fails.
. /work/tool-review-v26/common.sh
ts apply --te-src "$T/te-src" >/dev/null 2>&1
ts rebase --onto up-conflict --te-src "$T/te-src"            # stops on 0003 (conflict)
cd "$T/proj/fork"
git checkout --theirs docs/examples/op_fuser/op_fuser.rst && git add docs/examples/op_fuser/op_fuser.rst
echo "MY DRAFT" > docs/examples/op_fuser/moe_channels.py     # a file 0011 creates
cd "$T/proj"
ts rebase --continue                                          # stops: files of yours in the way
ts rebase --continue                                          # stashes them; message says: stash pop brings them back
git -C fork stash pop; echo "stash pop rc=$?"                 # fails: already exists, no checkout
git -C fork stash list
