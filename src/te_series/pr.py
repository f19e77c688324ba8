"""`te-series pr --te-src PATH`: what a contributor pushes, one branch per PR.

patches/series groups the patches into PRs with `# pr: <slug> [on <base>]` lines (a group
runs to the next marker). For each group, in order, branch `pr/<slug>` is its base's branch
(`main`: the upstream base; by default the PR before it) with its own commits on top, built
as check builds it (worktree.build_prs, after the whole series).

Every commit is signed off by the submitter (`--identity`, else git config), under the DCO:
every sign-off of the project's placeholder goes, wherever it stands and however it is
spelled; a commit it authored gets the submitter as author. After the branches are built,
any placeholder left refuses, writing nothing. OUT (default pr-out/) gets `pr.bundle`,
each PR's description and patches, and SUMMARY.md (README: Preparing the PRs).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path

from .check import lint_groups, try_each
from .util import rel, SeriesError
from .git import blob_id, format_patch, git, git_run, interpret_trailers, log1, object_id
from .series import load_series, norm_email, Series, SIGNOFF_RE, split_identity
from .base import init_git_base, prerequisite_needs
from .worktree import build_prs, refuse_out

MARKER = ".te-series-pr"
PART = ".te-series-pr.part"  # a file being put in place (a killed run's is removed)
MARKER_HEAD = "written by te-series pr; the next run replaces these files:\n"
RESERVED = re.compile(r"(^|\.)(invalid|example|test|localhost|example\.(com|net|org))$")
EMAIL_RE = re.compile(r"[^\s<>@,;:\"()\[\]]+@[^\s<>@,;:\"()\[\]]+")


def mentions(text: str, email: str) -> list[str]:
    """The lines of text that name the address `email` (normalised)."""
    want = norm_email(email)
    return [
        line
        for line in text.splitlines()
        if any(norm_email(e) == want for e in EMAIL_RE.findall(line))
    ]


def identity(root: Path, given: str | None, series: Series) -> tuple[str, str]:
    """The submitter's (name, email); refuse none, the project's placeholder and odd ones."""
    if given is None:
        name = git_run("config", "user.name", cwd=root).stdout.strip()
        email = git_run("config", "user.email", cwd=root).stdout.strip()
        if not name or not email:
            raise SeriesError(
                "no submitter identity: the commits must be signed off by you (DCO). Set "
                'git config user.name/user.email here, or pass --identity "Name <email>".'
            )
        given = f"{name} <{email}>"
    who = split_identity(given)
    if who is None:
        raise SeriesError(f'--identity {given!r} is not "Name <email>"')
    placeholder = split_identity(series.base_value("series", "placeholder_identity"))
    if norm_email(who[1]) == norm_email(placeholder[1]):
        raise SeriesError(
            f"{given} is the project's placeholder identity (base.toml [series] "
            "placeholder_identity), not a person: set your own (git config user.name/"
            'user.email, or --identity "Name <email>") to sign off the PRs.'
        )
    domain = norm_email(who[1]).rpartition("@")[2]
    if RESERVED.search(domain):
        raise SeriesError(
            f"{given}: {domain} is a reserved domain that receives no mail, so it cannot sign "
            'off under the DCO. Use your real address (--identity "Name <email>"; a GitHub '
            "noreply address is fine)."
        )
    return who


def resign(message: str, who: str, placeholder_email: str) -> str:
    """The message without the placeholder's sign-offs, signed off by `who` at the end.

    Every `Signed-off-by:` line naming the placeholder's address goes, wherever it stands
    (a squash leaves one in the body); blank lines left behind are folded; other trailers
    stay. The result has no trailing blank line.
    """
    kept = []
    for line in message.rstrip("\n").split("\n"):
        m = SIGNOFF_RE.match(line)
        ident = split_identity(m.group(1)) if m else None
        if ident and norm_email(ident[1]) == norm_email(placeholder_email):
            continue
        kept.append(line)
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip("\n") + "\n"
    out = interpret_trailers(text, "--if-exists", "addIfDifferent", "--trailer",
                             f"Signed-off-by: {who}")  # fmt: skip
    return out.rstrip("\n") + "\n"


def scan(repo: Path, base: str, tips: list[str], placeholder_email: str) -> None:
    """Refuse PR commits that still name the placeholder (message, author or committer)."""
    log = git("log", "--format=%H%x00%s%x00%an <%ae>%x00%cn <%ce>%x00%B%x00", *tips, f"^{base}",
              cwd=repo).split("\0")  # fmt: skip
    found = []
    for k in range(0, len(log) - 4, 5):
        sha, subject, author, committer, body = (x.strip() for x in log[k : k + 5])
        for what, text in (("author", author), ("committer", committer), ("message", body)):
            for line in mentions(text, placeholder_email):
                found.append(f"{sha[:12]} {subject!r}: {what}: {line.strip()!r}")
    if found:
        raise SeriesError(
            "the PR commits still name the project's placeholder identity, which must not be "
            "submitted:\n  " + "\n  ".join(found) + "\nEdit those patches (te-series apply "
            "--te-src PATH, git -C fork rebase -i, te-series export), then run pr again. "
            "Nothing was written."
        )


def refuse_prerequisites(repo: Path, series: Series, base: str, te_src: Path) -> None:
    """Refuse while the base lacks an upstream prerequisite: upstream's change would be
    pushed under the PRs, as if it were ours. The way on is an upstream main that has it,
    which te_src's origin/main may not have yet (v19 F5)."""
    lacking = [p for p in series.prerequisites if prerequisite_needs(repo, base, p)]
    if not lacking:
        return
    said = "; ".join(f"#{p.pr} {p.subject!r}" for p in lacking)
    src, main = shlex.quote(str(te_src)), object_id(te_src, "refs/remotes/origin/main^{commit}")
    try:
        merged = bool(main) and not any(prerequisite_needs(te_src, main, p) for p in lacking)
    except SeriesError:  # a main that changed the file some other way has not merged it
        merged = False
    rebase = f"te-series rebase --onto origin/main --te-src {src}, then run pr again"
    way = (f"{src}'s origin/main ({main[:12]}) has them: {rebase}." if merged else
           f"{src}'s origin/main{f' ({main[:12]})' if main else ''} has not merged them (nor "
           "has upstream, unless it is newer than your last fetch), and no PR can go on an "
           f"upstream main without them. Fetch it (git -C {src} fetch origin); once "
           f"origin/main has them: {rebase}. Until then te-series check --te-src {src} "
           "tests each PR on its base with them applied.")  # fmt: skip
    raise SeriesError(
        f"the base {base[:12]} lacks the upstream prerequisite(s) {said}, which the series is "
        f"written on: the PR branches would carry upstream's change as part of ours. {way} "
        "Nothing was written."
    )


def walk_out(out: Path, root: Path) -> set[str]:
    """The files under OUT (relative names, the marker left out): the one walk of it. A
    symbolic link inside OUT is refused: pr would write through it, where its record of
    what it wrote does not see (tool-review-v7 #1)."""
    files = set()
    for top, subdirs, names in os.walk(out):
        for n in subdirs + names:
            if (Path(top) / n).is_symlink():
                link = Path(top) / n
                raise SeriesError(
                    f"{rel(link, root)} is a symbolic link (to {os.readlink(link)}): pr writes "
                    "only into folders of its own, and through a link it would overwrite files "
                    "it cannot check. Remove the link (or put the folder it names in its "
                    "place), or choose another --out; nothing was written."
                )
        files |= {(Path(top) / n).relative_to(out).as_posix() for n in names}
    return files - {MARKER, PART}


def prepare_out(out: Path, root: Path) -> None:
    """OUT must be empty or an earlier pr output, whose files (those its marker lists, and
    no others) are removed: only while each still holds what pr wrote (the marker records
    its blob id), so that an edit of yours is never overwritten."""
    if out.exists() and any(n.name != PART for n in out.iterdir()):  # a stopped run's (v35 #3)
        marker = out / MARKER
        if not marker.is_file():
            raise SeriesError(
                f"{rel(out, root)} is not empty and was not written by te-series pr; "
                "choose another --out"
            )
        wrote = {}
        for line in marker.read_text(errors="replace").splitlines()[1:]:
            blob, sep, name = line.partition(" ")
            if sep and re.fullmatch(r"[0-9a-f]{40}", blob):
                wrote[name] = blob
            else:  # an earlier te-series listed names only
                wrote[line] = ""
        found = walk_out(out, root)
        other = sorted(found - set(wrote))
        if other:
            raise SeriesError(
                f"{rel(out, root)} holds file(s) te-series pr did not write: "
                f"{', '.join(other[:5])}. pr replaces only its own files: move those out "
                "(or delete the folder), or choose another --out."
            )
        # Only what the marker lists and is found in OUT: a marker line naming a path
        # elsewhere (absolute, or through ..) removes nothing.
        present = sorted(set(wrote) & found)
        edited = [n for n in present if blob_id((out / n).read_bytes()) != wrote[n]]
        if edited:
            where = rel(out, root)
            raise SeriesError(
                f"{', '.join(f'{where}/{n}' for n in edited[:5])} changed since te-series pr "
                "wrote it"
                + (
                    " (or was written by an earlier te-series, which kept no record "
                    "of what it wrote)"
                    if any(not wrote[n] for n in edited)
                    else ""
                )
                + "; pr would replace or delete it. Keep your edit elsewhere (e.g. in "
                "patches/pr/<slug>.md, which pr reads) and delete the file, or use another "
                "--out; then run again."
            )
        for name in present:
            (out / name).unlink()
        # pr's own folders (of the files it wrote) go when empty; a folder of yours stays
        for d in sorted({p for n in present for p in Path(n).parents if p.parts}, reverse=True):
            if not any((out / d).iterdir()):
                (out / d).rmdir()
    out.mkdir(parents=True, exist_ok=True)
    (out / PART).unlink(missing_ok=True)


def place(made: Path, out: Path) -> None:
    """Put the files pr made (in `made`) into out: first the list of them with each one's
    blob id, so that the next run replaces those files (while unchanged) and no others, then
    each file whole (copied to PART, renamed into place). A run killed at any point leaves
    only files its list names, as pr wrote them (v26 #3: a list written last, when a kill
    had left it empty, disowned pr's own files)."""
    names = sorted(p.relative_to(made).as_posix() for p in made.rglob("*") if p.is_file())
    listed = "".join(f"{blob_id((made / n).read_bytes())} {n}\n" for n in names)
    (out / PART).write_text(MARKER_HEAD + listed)
    os.replace(out / PART, out / MARKER)
    for name in names:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(made / name, out / PART)
        os.replace(out / PART, out / name)


def run(args) -> int:
    root = args.root
    series = load_series(root)
    names = series.names()
    groups, problems = series.groups()
    if not groups:
        raise SeriesError(
            f"{series.label} has no '# pr: <slug>' lines; group the patches into PRs first (a "
            "line '# pr: <slug>' above each PR's patches, its description in patches/pr/<slug>.md)"
        )
    problems += lint_groups(series)
    if problems:
        raise SeriesError("PR groups:\n  " + "\n  ".join(dict.fromkeys(problems)))
    if args.te_src is None:
        raise SeriesError("pr needs a git base: --te-src PATH (a TE checkout with the base)")
    name, email = identity(root, args.identity, series)
    who = f"{name} <{email}>"
    placeholder = split_identity(series.base_value("series", "placeholder_identity"))[1]
    out = args.out or root / "pr-out"
    refuse_out(root, out, "pr-out", folder=True)
    with tempfile.TemporaryDirectory(prefix="te-series-pr-") as tmp:
        repo = Path(tmp) / "repo"
        base = init_git_base(repo, args.te_src, series.base_commit)
        refuse_prerequisites(repo, series, base, args.te_src)
        # The whole series first, as check applies it: build_prs merges with its objects.
        try_each(repo, series, include=None, pylintrc=None, run_style=False)
        summary, authors = [], {}

        def resign_head() -> None:
            msg, author_email, date = git("log", "-1", "--format=%B%x00%ae%x00%aI",
                                          cwd=repo).split("\0")  # fmt: skip
            env = {
                "GIT_AUTHOR_NAME": name,
                "GIT_AUTHOR_EMAIL": email,
                "GIT_COMMITTER_NAME": name,
                "GIT_COMMITTER_EMAIL": email,
                "GIT_AUTHOR_DATE": date.strip(),
                "GIT_COMMITTER_DATE": date.strip(),
            }
            # The placeholder as author becomes the submitter; a real author stays.
            reset = norm_email(author_email) == norm_email(placeholder)
            git(
                "commit", "-q", "--amend", "--no-verify", "--cleanup=verbatim",
                *(["--reset-author"] if reset else []), "-F", "-",
                cwd=repo, env=env, input=resign(msg, who, placeholder),
            )  # fmt: skip
            author = log1(repo, "%an <%ae>")
            authors[author] = authors.get(author, 0) + 1

        for slug, on, group, failed in build_prs(repo, series, base, each=resign_head):
            if failed:
                raise SeriesError(
                    f"PR {slug} on {on}: {failed}Nothing was written; te-series check names it "
                    "too."
                )
            summary.append((slug, base if on == "main" else f"pr/{on}", group))
        branches = [f"pr/{slug}" for slug, *_ in groups]
        scan(repo, base, branches, placeholder)
        made = Path(tmp) / "out"
        made.mkdir()
        git("bundle", "create", "-q", str(made / "pr.bundle"), *branches, f"^{base}", cwd=repo)
        for slug, on, _ in summary:
            shutil.copy2(series.dir / "pr" / f"{slug}.md", made / f"{slug}.md")
            format_patch(repo, f"{on}..pr/{slug}", made / slug)
        write_summary(made, out, base, who, summary, authors)
        prepare_out(out, root)
        place(made, out)
    print(f"{len(groups)} PR branch(es), {len(names)} commit(s), signed off by {who}:")
    print((out / "SUMMARY.md").read_text())
    return 0


def write_summary(made: Path, out: Path, base: str, who: str, summary,
                  authors: dict[str, int]) -> None:  # fmt: skip
    by = ", ".join(f"{a} ({n})" for a, n in authors.items())
    lines = [
        "# PR branches",
        "",
        f"Upstream base: {base}. Every commit is signed off by {who}; authors: {by}.",
        "",
        "| branch | base | commits | description |",
        "|---|---|---|---|",
    ]
    for slug, on, group in summary:
        base_name = on if on.startswith("pr/") else f"main (upstream {on[:12]})"
        lines.append(f"| pr/{slug} | {base_name} | {len(group)} | {slug}.md |")
    lines += [
        "",
        "In your TE checkout:",
        "",
        f"    git fetch {shlex.quote(str(out / 'pr.bundle'))} 'refs/heads/pr/*:refs/heads/pr/*'",
        "    git push <your fork> " + " ".join(f"pr/{s}" for s, _, _ in summary),
        "",
        "Open the PRs in order, each on the base its row names (upstream: main).",
    ]
    (made / "SUMMARY.md").write_text("\n".join(lines) + "\n")
