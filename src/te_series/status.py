"""`te-series status`: where fork/, an unfinished fork.new/ and the port trees stand."""

from __future__ import annotations

from .util import BACKUP_DIR, locked, rel
from .worktree import describe_tree, fetch_back, port_folder_held, WorkTree


def run(args) -> int:
    for last in (False, True):  # a tree another te-series swapped away meanwhile: again (v14 #4)
        try:
            said = [describe_tree(tree, args.root) for tree in WorkTree.existing(args.root)]
            break
        except OSError:
            if last:
                raise
    said = said or ["no fork/: te-series apply makes one"]
    kept = sorted((p for p in (args.root / BACKUP_DIR).glob("*/fork*") if p.is_dir()),
                  key=lambda p: (p.parent.name, p.name == "fork"))  # fmt: skip
    if kept:  # also one that a run stopped before it said so (v27 #3)
        newest = rel(kept[-1], args.root)
        said.append(f"{len(kept)} replaced fork/ tree(s) kept whole in {BACKUP_DIR}/, the "
                    f"newest {newest}/: {fetch_back(kept[-1], args.root, args.root / 'fork')}")  # fmt: skip
    held = port_folder_held(args.root, "te-series port --edit --release RELEASE")
    said += [str(held)] if held else []
    if locked(args.root):  # its trees are half made: wait, not go on (v11 #8)
        said.insert(0, "another te-series command is running in this project (below: how far it "
                    "got): wait until it has ended, then run te-series status again")  # fmt: skip
    print("\n".join(said))
    return 0
