"""`te-series status`: where fork/, an unfinished fork.new/ and the port trees stand."""

from __future__ import annotations

from .worktree import describe_tree, WorkTree


def run(args) -> int:
    found = WorkTree.existing(args.root)
    for tree in found:
        print(describe_tree(tree, args.root))
    if not found:
        print("no fork/: te-series apply makes one")
    return 0
