"""Print each PR of patches/series with the patches of its base chain and its own, one per line.

    slug<TAB>patch patch ...

`# pr: <slug> on <base>` names the base (`main`, or an earlier slug); a PR without `on`
sits on everything before it in the series. With `--upto SLUG`, print instead the series in
order through SLUG's patches, as `set<TAB>patch ...`. Used by gpu/h200.sh's `prs` stage;
stdlib only.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

PR = re.compile(r"^#\s*pr:\s*([a-z0-9][a-z0-9._-]*)(?:\s+on\s+(\S+))?\s*$")


def chains(series: Path) -> list[tuple[str, list[str]]]:
    groups: list[tuple[str, str | None, list[str]]] = []
    for line in series.read_text().splitlines():
        m = PR.match(line.strip())
        if m:
            groups.append((m.group(1), m.group(2), []))
        elif line.strip() and not line.lstrip().startswith("#") and groups:
            groups[-1][2].append(line.strip())
    full: dict[str, list[str]] = {}
    done: list[str] = []
    out = []
    upto = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--upto" else None
    for slug, base, names in groups:
        if base is None:
            below = list(done)
        elif base == "main":
            below = []
        else:
            below = full[base]
        full[slug] = below + names
        done += names
        out.append((slug, full[slug]))
        if slug == upto:
            return [("set", list(done))]
    return out


if __name__ == "__main__":
    for slug, names in chains(Path(sys.argv[1])):
        print(slug + "\t" + " ".join(names))
