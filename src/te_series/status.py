"""`te-series status`: where fork/, an unfinished fork.new/ and the port trees stand."""

from __future__ import annotations

from .util import locked
from .worktree import describe_tree, port_folder_held, WorkTree


def run(args) -> int:
    for last in (False, True):  # a tree another te-series swapped away meanwhile: again (v14 #4)
        try:
            said = [describe_tree(tree, args.root) for tree in WorkTree.existing(args.root)]
            break
        except OSError:
            if last:
                raise
    said = said or ["no fork/: te-series apply makes one"]
    held = port_folder_held(args.root, "te-series port --edit --release RELEASE")
    said += [str(held)] if held else []
    if locked(args.root):  # its trees are half made: wait, not go on (v11 #8)
        said.insert(0, "another te-series command is running in this project (below: how far it "
                    "got): wait until it has ended, then run te-series status again")  # fmt: skip
    print("\n".join(said))
    return 0
