"""`te-series status`: where fork/, an unfinished fork.new/ and the port trees stand."""

from __future__ import annotations

from .core import describe_tree, work_trees


def run(args) -> int:
    found = work_trees(args.root)
    for tree in found:
        print(describe_tree(tree, args.root))
    if not found:
        print("no fork/: te-series apply makes one")
    return 0
