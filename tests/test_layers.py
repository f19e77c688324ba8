"""The modules import one way: util <- git <- series <- base <- worktree <- the verbs. A
shared module never imports a later one or a verb, so each concept has one home below
everything that uses it (results/tool-reshape.md)."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src" / "te_series"
LAYERS = ["util", "git", "series", "base", "worktree"]


def imports(module: str) -> set[str]:
    """The te_series modules a module imports, at its top or inside a function."""
    tree = ast.parse((SRC / f"{module}.py").read_text())
    found = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.level == 1:
            found |= {n.module} if n.module else {a.name for a in n.names}
    return found


def test_shared_modules_import_only_the_layers_below_them():
    wrong = {}
    for i, module in enumerate(LAYERS):
        above = imports(module) - set(LAYERS[:i])
        if above:
            wrong[module] = sorted(above)
    assert not wrong, wrong


def test_there_is_no_core_module_left():
    assert not (SRC / "core.py").exists()
    verbs = [p.stem for p in SRC.glob("*.py") if p.stem not in LAYERS]
    assert not [v for v in verbs if "core" in imports(v)]
