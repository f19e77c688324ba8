"""`te-series status`: where fork/, an unfinished fork.new/ and the port trees stand."""

from __future__ import annotations

from .worktree import describe_tree, WorkTree


def run(args) -> int:
    for last in (False, True):  # a tree another te-series swapped away meanwhile: again (v14 #4)
        try:
            said = [describe_tree(tree, args.root) for tree in WorkTree.existing(args.root)]
            break
        except OSError:
            if last:
                raise
    print("\n".join(said or ["no fork/: te-series apply makes one"]))
    return 0
