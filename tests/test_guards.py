"""results/tool-guards.md names, for each guard, the function that holds it and the tests that
fail without it: every one of those must exist, so that the table stays a map of the code."""

from __future__ import annotations

from pathlib import Path
import ast
import importlib
import re


ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "results" / "tool-guards.md"


def rows() -> list[list[str]]:
    lines = TABLE.read_text().splitlines()
    start = lines.index("| function | # | guard | how removed | caught by |") + 2
    out = []
    for line in lines[start:]:
        if not line.startswith("| "):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        out.append([cells[0], cells[1], cells[2], " | ".join(cells[3:-1]), cells[-1]])
    return out


def defined_tests() -> dict[str, set[str]]:
    """Test file name -> the test functions defined in it."""
    found = {}
    for path in (ROOT / "tests").glob("test_*.py"):
        tree = ast.parse(path.read_text())
        found[path.name] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return found


def test_every_guard_names_a_function_that_exists():
    missing = []
    for fn, num, guard, _, _ in rows():
        if not fn.startswith("`") or guard.startswith("(gone"):
            continue  # a file (patches/.gitattributes, te-series), or a guard that went
        module, *attrs = fn.strip("`").split(".")
        obj = importlib.import_module(f"te_series.{module}")
        for a in attrs:
            obj = getattr(obj, a, None)
        if obj is None:
            missing.append(f"row {num}: {fn}")
    assert not missing, missing


def test_every_test_a_guard_names_exists():
    have = defined_tests()
    every = set().union(*have.values())
    missing = []
    for _, num, _, _, caught in rows():
        for file, name in re.findall(r"(?:tests/(test_\w+\.py)::)?\b(test_\w+)", caught):
            if file and name not in have.get(file, set()) or name not in every:
                missing.append(f"row {num}: {file + '::' if file else ''}{name}")
    assert rows() and not missing, missing
