"""The one series parser: `patches/series` (with `# pr:` groups), base.toml (with its
[[prerequisite]] tables), identities and sign-offs, and patch files read as git am reads them.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
import tomllib
from pathlib import Path

from .util import FIX_LINE, PATCH_GLOB, project_root, PYPI_PREFIX, read_text, rel, SeriesError
from .git import mailinfo


IDENTITY_RE = re.compile(r"^([^<>]+?)\s*<([^<>\s]+@[^<>\s]+)>$")
SIGNOFF_RE = re.compile(r"^\s*signed-off-by\s*:\s*(.*?)\s*$", re.I)  # any sign-off line


def norm_email(email: str) -> str:
    """An address as compared: lower case, no surrounding space, no trailing dots."""
    return email.strip().rstrip(".").lower()


def split_identity(text: str) -> tuple[str, str] | None:
    """(name, email) of "Name <email>", spaces inside normalised; None when it is not one."""
    m = IDENTITY_RE.match(" ".join(text.split()))
    return (m.group(1), m.group(2)) if m else None


@dataclasses.dataclass
class Entry:
    """One line of a series file."""

    lineno: int
    text: str
    name: str | None = None  # a patch line
    pr: str | None = None  # a `# pr: <slug>` line


PR_RE = re.compile(r"^#\s*pr:\s*(.*?)\s*$")


PR_LOOSE_RE = re.compile(r"^#\s*pr\s*:", re.I)


PR_ON_RE = re.compile(r"^(\S+)(?:\s+on\s+(\S+))?$")  # `# pr: <slug> [on <base>]`


SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


BASE_KEYS = {
    ("upstream", "commit"): ("the upstream commit the series applies to", "commit"),
    ("pypi", "release"): ("the PyPI release whose files match the base commit", "release"),
    ("pypi", "torch"): ("the torch version of the CPU build", "text"),
    ("pypi", "core"): ("the name of TE's core wheel on PyPI", "text"),
    ("port", "targets"): ("the other releases the series is ported to", "list"),
    ("port", "torch"): ("the torch version of the ports' CPU build", "text"),
    ("series", "placeholder_identity"): (
        "the identity the stored patches are signed with",
        "identity",
    ),
}


BASE_EXAMPLES = {
    "text": '"..." (a string)',
    "list": '["2.19.0"] (a list of release numbers)',
    "release": '"2.20.2" (a release number)',
    "identity": '"Name <email>"',
    "commit": '"<40 hex digits>" (a full commit id: git rev-parse COMMIT prints it)',
}


BLOB_RE = re.compile(r"^[0-9a-f]{40}$")


RELEASE_RE = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")  # a PEP 440 version: no glob, no path


PREREQ_EXAMPLE = """[[prerequisite]]
pr = 3410
subject = "Reduce Grouped MLP Fuser CPU Overhead (#3410)"
release = "2.20.2"
[prerequisite.files]
"transformer_engine/pytorch/ops/fuser.py" = { pre = "<40 hex>", post = "<40 hex>" }"""


@dataclasses.dataclass(frozen=True)
class Prerequisite:
    """An upstream change that main has and the base commit lacks (base.toml [[prerequisite]]).

    It is built at apply time from the release that contains it: each file whose blob is
    `pre` gets the release's file, whose blob is `post`. Upstream's work, never exported.
    """

    pr: int
    subject: str  # upstream's title, "... (#PR)": the subject of its commit in fork/
    release: str  # the PyPI release whose transformer_engine wheel holds the files
    files: dict[str, tuple[str, str]]  # path: (pre, post) blob ids

    @property
    def message(self) -> str:
        """The commit message: upstream's subject, and a body saying whose change it is."""
        body = (
            f"Upstream's change (TransformerEngine PR #{self.pr}): its part in "
            f"{', '.join(self.files)}, as released in {self.release}. Upstream main has it; "
            f"the base commit predates it. te-series made this commit from the files of the "
            f"{self.release} transformer_engine wheel (checked by blob id). It is upstream's "
            "work, not part of the series: te-series never exports it as a patch, and it "
            "carries no sign-off."
        )
        return f"{self.subject}\n\n{textwrap.fill(body, 72, break_on_hyphens=False)}\n"


class Series:
    """A series file and its patch files: patches/, or patches/port/<release>/.

    The series file is the one definition of which files are the series: names() in
    apply order. base.toml (always the main one) says where it applies.
    """

    def __init__(
        self,
        dir: Path,
        root: Path | None = None,
        base_file: Path | None = None,
        optional: bool = False,
        at: str | None = None,
    ):
        self.dir = Path(dir)
        self.at = at  # a revision of the checkout it was read from (range-diff), not the files
        self.optional = optional  # a missing series file is an empty series (ports)
        self.root = Path(root) if root else self.dir.parent
        self.base_file = Path(base_file) if base_file else self.dir / "base.toml"

    @property
    def series_file(self) -> Path:
        return self.dir / "series"

    @property
    def label(self) -> str:
        return rel(self.series_file, self.root)

    def entries(self, text: str | None = None) -> list[Entry]:
        """The lines of the series file (or of `text`, a series file's text to be)."""
        if text is None and not self.series_file.is_file():
            if self.optional:
                return []
            raise SeriesError(f"{self.label} not found; restore it (git checkout -- {self.label})")
        if text is None:
            text = read_text(self.series_file, self.root, self.mend(self.label, FIX_LINE))
        out = []
        for i, text in enumerate(text.splitlines(), 1):
            s = text.strip()
            m = PR_RE.match(s)
            if m:
                out.append(Entry(i, text, pr=m.group(1)))
            elif s and not s.startswith("#"):
                out.append(Entry(i, text, name=s))
            else:
                out.append(Entry(i, text))
        return out

    def listing_problems(self) -> list[str]:
        """Lines naming a missing patch file, or a patch listed twice. At a revision
        (range-diff's REV) each says what is wrong there, not how to fix the working tree's
        file (v33 #2)."""
        problems, seen = [], {}
        for e in self.entries():
            if e.name is None:
                continue
            first, line = e.name.split()[0], f"{self.label} line {e.lineno}"
            where = rel(self.dir, self.root)
            if not e.name.endswith(".patch") and first.endswith(".patch"):
                problems.append((f"{line} holds {first} and more: a series line is one file "
                                 f"name", f"move {e.name[len(first):].strip()!r} to a line of "
                                 "its own"))  # fmt: skip
            elif not e.name.endswith(".patch"):
                problems.append((f"{line} names {e.name}, which is not a patch file (*.patch)",
                                 "remove the line, or make it a comment (# ...)"))  # fmt: skip
            elif "/" in e.name:
                problems.append((f"{line} names {e.name}: a series line is a bare file name in "
                                 f"{where}/", f"write it as {Path(e.name).name}"))  # fmt: skip
            elif (self.dir / e.name).exists() and not (self.dir / e.name).is_file():
                problems.append((f"{line} names {e.name}, a folder, not a patch file",
                                 "remove the line"))  # fmt: skip
            elif not (self.dir / e.name).is_file():
                problems.append((f"{line} names {e.name}, which does not exist in {where}/",
                                 f"restore the file (git checkout -- {where}/{e.name}) or "
                                 "remove the line"))  # fmt: skip
            if e.name in seen:
                problems.append((f"{self.label} lists {e.name} twice (lines {seen[e.name]} and "
                                 f"{e.lineno})", "remove one line"))  # fmt: skip
            seen.setdefault(e.name, e.lineno)
        if self.at and problems:  # no fix reaches a revision's files
            return ["; ".join(w for w, _ in problems) + f". {self.mend(self.label)}"]
        return [f"{w}; {f}" for w, f in problems]

    def names(self) -> list[str]:
        """Patch file names in apply order; refuse a series with missing or repeated files."""
        problems = self.listing_problems()
        if problems:
            raise SeriesError("\n".join(problems))
        return [e.name for e in self.entries() if e.name]

    def paths(self) -> list[Path]:
        return [self.dir / n for n in self.names()]

    def stray(self) -> list[str]:
        """Patch files in the folder that the series file does not list."""
        listed = {e.name for e in self.entries() if e.name}
        return sorted(p.name for p in self.dir.glob(PATCH_GLOB) if p.name not in listed)

    def groups(self, entries: list[Entry] | None = None):
        """`# pr: <slug> [on <base>]` groups in order, [(slug, [patch names], base)], and
        problems with them (none when ungrouped): the one `# pr:` parser. A PR's base is
        `main` (the series' git base), or an earlier PR's slug; by default the PR before it.
        A PR's patches on its base are its base's (down to main), then its own."""
        groups: list[tuple[str, list[str], str]] = []
        problems, before, lines, label = [], [], {}, self.label
        every = self.entries() if entries is None else entries
        for e in every:
            if e.pr is None and e.name is None and PR_LOOSE_RE.match(e.text.strip()):
                problems.append(
                    f"{label} line {e.lineno}: {e.text.strip()!r} is a comment, not a PR "
                    f"marker; write it {PR_LOOSE_RE.sub('# pr:', e.text.strip())!r} to start a PR"
                )
            if e.pr is not None:
                m = PR_ON_RE.match(e.pr)
                slug, on = m.groups() if m else (e.pr, None)
                where = f"{label} line {e.lineno}: PR {slug!r}"
                if not m:
                    problems.append(
                        f"{label} line {e.lineno}: {e.text.strip()!r} is no PR marker: write it "
                        "'# pr: <slug>' (on the PR before it) or '# pr: <slug> on <base>' "
                        "(<base>: main, or the slug of an earlier PR)"
                    )
                elif not SLUG_RE.match(slug):
                    problems.append(
                        f"{label} line {e.lineno}: {slug!r} is not a PR slug "
                        "(lower-case letters, digits, '.', '_', '-', starting with a letter "
                        "or digit)"
                    )
                elif slug == "main":  # `on main` names the series' git base (v12 #9)
                    problems.append(
                        f"{where}: 'main' names the series' git base; give the PR "
                        "another slug (and its description file to match)"
                    )
                elif on not in (None, "main") and on not in lines:
                    later = [x.lineno for x in every if x.pr and x.pr.partition(" ")[0] == on]
                    problems.append(f"{where} is on " + (
                        "itself" if on == slug
                        else f"{on!r}, which comes after it (line {later[0]})" if later
                        else f"{on!r}, which is no PR of {label}"
                    ) + "; name main or the slug of a PR above it")  # fmt: skip
                if slug in lines:
                    problems.append(
                        f"{where} appears twice (line {lines[slug]} too); give one of them "
                        "another slug"
                    )
                lines.setdefault(slug, e.lineno)
                groups.append((slug, [], on or (groups[-1][0] if groups else "main")))
            elif e.name:
                (groups[-1][1] if groups else before).append(e.name)
        if groups and before:
            problems.append(
                f"{', '.join(before)} stand(s) before the first '# pr:' line of {label}; "
                "move them below one"
            )
        # pr writes OUT/pr.bundle, OUT/SUMMARY.md and, per slug, OUT/<slug>.md and OUT/<slug>/
        taken = {"pr.bundle", "summary.md"} | {f"{slug}.md" for slug in lines}
        for slug, names, _ in groups:
            if not names and slug not in {g[0] for g in groups if g[1]}:  # not a twice (v23 #8)
                problems.append(f"PR {slug!r} has no patches; {self.unstack(groups, {slug})}")
            if slug in taken:
                problems.append(
                    f"{label} line {lines[slug]}: PR slug {slug!r} is the name of a file pr "
                    f"writes; rename it (e.g. {slug.replace('.', '-')!r}, and its description "
                    f"{rel(self.dir, self.root)}/pr/{slug}.md to match)"
                )
        return groups, problems

    def unstack(self, groups, gone: set[str]) -> str:
        """How to take PRs `gone` out of the series file: their '# pr:' lines and descriptions,
        and the PRs on them put on their bases instead (v13 #5: they named a PR no more)."""
        base = {slug: on for slug, _, on in groups}
        marks = {e.pr.partition(" ")[0]: e.text.strip() for e in self.entries() if e.pr}
        edits = []
        for slug, _, on in groups:
            for _ in groups:  # down to a base that stays (a bad marker may loop)
                on = base[on] if on in gone else on
            if slug not in gone and base[slug] in gone:
                edits.append(f"{marks.get(slug, slug)!r} to '# pr: {slug} on {on}'")
        files = [self.dir / "pr" / f"{g}.md" for g in sorted(gone)]
        files = [rel(f, self.root) for f in files if f.is_file()]
        return (
            f"remove {'its' if len(gone) == 1 else 'their'} '# pr:' line from {self.label}"
            + (f", change {', '.join(edits)} (the PRs on it go on its base)" if edits else "")
            + (f", and delete {', '.join(files)}" if files else "")
        )

    # ----------------------------------------------------------------- base.toml

    def mend(self, label: str, fix: str = "") -> str:
        """How to get past a bad file of the series: fix or restore it; at a revision
        (range-diff's REV), where neither reaches, name another (v22 R9)."""
        if self.at:
            return f"That is {label} at {self.at}, which cannot be used: name another revision."
        fix = f"{fix}, or restore the file" if fix else "Restore it"
        return f"{fix} (git checkout -- {label})."

    def base(self) -> dict:
        label = rel(self.base_file, self.root)
        try:
            text = read_text(self.base_file, self.root, self.mend(label, FIX_LINE))
        except FileNotFoundError:
            raise SeriesError(
                f"{label} not found: it names the upstream commit and PyPI release the series "
                f"applies to. {self.mend(label)}"
            ) from None
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise SeriesError(
                f"{label} is not valid TOML ({e}). {self.mend(label, 'Fix it')}"
            ) from None

    def base_value(self, table: str, key: str):
        """A value of base.toml, checked against the type it must have."""
        label = rel(self.base_file, self.root)
        what, kind = BASE_KEYS[(table, key)]
        value = self.base().get(table, {})
        value = value.get(key) if isinstance(value, dict) else None
        if value is None or value == "":  # [port] targets = [] ports to none
            raise SeriesError(
                f"{label} lacks `{key}` in [{table}] ({what}). {self.mend(label, 'Add it')}"
            )
        ok = {
            "text": isinstance(value, str) and value.strip() == value and "\n" not in value,
            "list": isinstance(value, list)
            and all(isinstance(v, str) and RELEASE_RE.match(v) for v in value),  # v10 #2
            "release": isinstance(value, str) and bool(RELEASE_RE.match(value)),
            "identity": isinstance(value, str) and bool(IDENTITY_RE.match(value.strip())),
            "commit": isinstance(value, str) and bool(BLOB_RE.fullmatch(value)),  # not HEAD (v9 #4)
        }[kind]
        if not ok:
            raise SeriesError(
                f"{label} [{table}] {key} = {value!r} is not {BASE_EXAMPLES[kind]} ({what}). "
                + self.mend(label, f"Write it as {key} = {BASE_EXAMPLES[kind].split(' (')[0]}")
            )
        return value

    @property
    def base_commit(self) -> str:
        return self.base_value("upstream", "commit")

    @property
    def release(self) -> str:
        return self.base_value("pypi", "release")

    @property
    def port_targets(self) -> list[str]:
        return list(self.base_value("port", "targets"))

    @property
    def prerequisites(self) -> list[Prerequisite]:
        """base.toml's [[prerequisite]] tables, checked; [] when there are none."""
        label = rel(self.base_file, self.root)
        raw = self.base().get("prerequisite", [])

        def bad(where: str, what: str):
            raise SeriesError(
                f"{label} {where} {what}. A prerequisite is written\n{PREREQ_EXAMPLE}\n"
                + self.mend(label, "Fix it")
            )

        if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
            bad("`prerequisite`", "is not a list of [[prerequisite]] tables")
        out: list[Prerequisite] = []
        for i, t in enumerate(raw, 1):
            where = f"[[prerequisite]] number {i}"
            unknown = sorted(set(t) - {"pr", "subject", "release", "files"})
            if unknown:
                bad(where, f"has unknown key(s) {', '.join(unknown)}")
            pr = t.get("pr")
            if not isinstance(pr, int) or isinstance(pr, bool) or pr <= 0:
                bad(f"{where}: pr = {pr!r}", "is not an upstream PR number (pr = 3410)")
            where = f"[[prerequisite]] pr = {pr}:"
            if pr in [p.pr for p in out]:
                bad(where, "is listed twice; remove one table")
            for key in ("subject", "release"):
                v = t.get(key)
                if not isinstance(v, str) or not v.strip() or v.strip() != v or "\n" in v:
                    bad(f"{where} {key} = {v!r}", 'is not "..." (a one-line string)')
                if "\0" in v:
                    bad(f"{where} {key} = {v!r}", "holds a NUL character")
            if not RELEASE_RE.match(t["release"]):
                bad(f"{where} release = {t['release']!r}", 'is not a release number ("2.20.2")')
            files = t.get("files")
            if not isinstance(files, dict) or not files:
                bad(f"{where} files", "is missing or empty ([prerequisite.files])")
            pins = {}
            for path, ids in files.items():
                key = f'{where} files."{path}"'
                parts = path.split("/")
                if not path.startswith(PYPI_PREFIX) or "" in parts or {".", ".."} & set(parts):
                    bad(
                        key,
                        f"is not a file under {PYPI_PREFIX} (it comes from the release's wheel)",
                    )
                if not isinstance(ids, dict) or sorted(ids) != ["post", "pre"]:
                    bad(key, 'is not { pre = "<blob id>", post = "<blob id>" }')
                for k in ("pre", "post"):
                    if not isinstance(ids[k], str) or not BLOB_RE.match(ids[k]):
                        bad(f"{key}.{k} = {ids[k]!r}", "is not a full blob id (40 hex digits)")
                if ids["pre"] == ids["post"]:
                    bad(key, "has pre = post (no change)")
                other = next((q.pr for q in out if path in q.files), None)
                if other is not None:
                    bad(key, f"is a file of prerequisite #{other} too; one table per file")
                pins[path] = (ids["pre"], ids["post"])
            out.append(Prerequisite(pr, t["subject"], t["release"], pins))
        return out

    def port_series(self, release: str) -> Series:
        """The port patches for a release (patches/port/<release>/), maybe empty."""
        return Series(self.dir / "port" / release, self.root, self.base_file, optional=True)


def load_series(root: Path | None = None) -> Series:
    root = root or project_root()
    return Series(root / "patches", root)


HEADER_RE = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")


def base_text_with_commit(series: Series, commit: str) -> str:
    """base.toml's text with its [upstream] commit line pointed at `commit`, one line edited;
    nothing else changes.

    Refuses (before anything is written) a file it cannot edit that way.
    """
    label = rel(series.base_file, series.root)
    old = read_text(series.base_file, series.root)
    lines = old.splitlines(keepends=True)
    table, done, found = None, False, ""
    for i, line in enumerate(lines):
        m = HEADER_RE.match(line)
        if m:
            table = m.group(2)
            continue
        m = re.match(
            r"""^(\s*commit\s*=\s*)("[0-9A-Za-z._/-]*"|'[0-9A-Za-z._/-]*')(.*)$""", line, re.S
        )
        if table == "upstream" and re.match(r"^\s*commit\s*=", line) and not done:
            found = line.strip()
            if m:
                quote = m.group(2)[0]
                lines[i] = f"{m.group(1)}{quote}{commit}{quote}{m.group(3)}"
                done = True
    if not done:
        raise SeriesError(
            f"cannot point {label}'s [upstream] commit at {commit[:12]}: its line "
            f"({found or 'none found'}) is not `commit = \"<id>\"` in the [upstream] table. "
            f"Write it that way, commit {label}, and run again; nothing was changed."
        )
    text = "".join(lines)
    want = tomllib.loads(old)
    want["upstream"]["commit"] = commit
    try:
        ok = tomllib.loads(text) == want
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:
        raise SeriesError(
            f"cannot point {label}'s [upstream] commit at {commit[:12]} by editing its line "
            f'({found}) alone. Write it as `commit = "<id>"` in the [upstream] table, '
            f"commit {label}, and run again; nothing was changed."
        )
    return text


@dataclasses.dataclass
class FileChange:
    """One `diff --git` section of a patch: its path and pre/post blob ids."""

    path: str
    old_blob: str | None  # None for a new file
    new_blob: str | None  # None for a deleted file
    hunks: list[str]  # the "@@ ... @@" header lines, for error messages
    binary: bool = False  # a `GIT binary patch` (or "Binary files ... differ")
    new_file: bool = False  # "new file mode" (a section without an index line, a chmod, is none)


# What a patch of the series may not hold (check names it, export refuses it; v13 #6).
NO_BINARY = (
    "binary files are not accepted in an upstream TE patch series (a reviewer cannot read them "
    "in a patch, and TE's checks cannot lint them): take each out of its commit in fork/"
)


@dataclasses.dataclass
class PatchInfo:
    """One `git format-patch` file, as `git am` reads it (through `git mailinfo`)."""

    path: Path
    subject: str
    body: str
    files: list[FileChange]
    author: str = ""  # "Name <email>"

    @property
    def message(self) -> str:
        return f"{self.subject}\n\n{self.body}\n" if self.body else f"{self.subject}\n"


_INDEX_RE = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)")


_ZERO = re.compile(r"^0+$")


_C_ESCAPES = {"a": 7, "b": 8, "t": 9, "n": 10, "v": 11, "f": 12, "r": 13, '"': 34, "\\": 92}


def _unquote(s: str) -> tuple[str, str]:
    """A C-quoted path as git writes it ("a/caf\\303\\251.py"), and the text after it."""
    out, i = bytearray(), 1
    while i < len(s):
        c = s[i]
        if c == '"':
            return out.decode("utf-8", "surrogateescape"), s[i + 1 :]
        if c == "\\" and i + 1 < len(s):
            d = s[i + 1]
            if d in "01234567":
                out.append(int(s[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(_C_ESCAPES.get(d, ord(d)))
            i += 2
            continue
        out += c.encode("utf-8", "surrogateescape")
        i += 1
    return out.decode("utf-8", "surrogateescape"), ""


def _diff_path(rest: str) -> str:
    """The file of a `diff --git <a> <b>` header (quoted names and spaces allowed)."""
    if rest.startswith('"'):
        after = _unquote(rest)[1].lstrip(" ")
        b = _unquote(after)[0] if after.startswith('"') else after
    else:
        half = (len(rest) - 1) // 2
        if len(rest) % 2 and rest[half] == " " and rest[2:half] == rest[half + 3 :]:
            b = rest[half + 1 :]  # "a/P b/P": the same path, maybe with spaces in it
        else:
            b = "b/" + rest.rpartition(" b/")[2]
    return b[2:] if b.startswith("b/") else b


def parse_diff(text: str) -> list[FileChange]:
    """Per-file paths, blob ids and hunk headers of a patch's diff part."""
    files: list[FileChange] = []
    for line in text.splitlines():
        if line.startswith("diff --git "):
            files.append(FileChange(_diff_path(line[len("diff --git ") :]), None, None, []))
            continue
        if not files:
            continue
        if line.startswith("rename to "):
            rest = line[len("rename to ") :]
            files[-1].path = _unquote(rest)[0] if rest.startswith('"') else rest
            continue
        m = _INDEX_RE.match(line)
        if m and files[-1].old_blob is None and files[-1].new_blob is None and not files[-1].hunks:
            old, new = m.groups()
            files[-1].old_blob = None if _ZERO.match(old) else old
            files[-1].new_blob = None if _ZERO.match(new) else new
        elif line.startswith("new file mode "):
            files[-1].new_file = True
        elif line.startswith("@@ "):
            files[-1].hunks.append(line.split(" @@")[0] + " @@")
        elif line == "GIT binary patch" or re.match(r"Binary files .* differ$", line):
            files[-1].binary = True
    return files


def read_patch(path: Path) -> PatchInfo:
    """Subject, body and author (as `git am` reads them) and per-file blob ids of a patch."""
    path = Path(path)
    headers, body, diff = mailinfo(path.read_bytes(), path.parent, path.name)
    author = f"{headers.get('Author', '')} <{headers.get('Email', '')}>"
    return PatchInfo(path, headers.get("Subject", ""), body, parse_diff(diff), author)


def base_preimages(patches: list[PatchInfo]) -> dict[str, str | None]:
    """For each file the series touches, the blob id it must have in the base.

    Only a file's first touch in the series speaks about the base; later patches see the
    post-image of earlier ones.
    """
    out: dict[str, str | None] = {}
    for p in patches:
        for f in p.files:
            if f.old_blob or f.new_file:  # no index line (a mode change): nothing of the blob
                out.setdefault(f.path, f.old_blob)
    return out
