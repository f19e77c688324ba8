"""`te-series pr --te-src PATH`: what a contributor pushes, one stacked branch per PR.

patches/series groups the patches into PRs with `# pr: <slug>` lines (a group runs to the
next marker). For each group, in order, branch `pr/<slug>` holds the upstream base, the
previous PRs' commits and its own, so each PR is reviewable on top of the one before.

Every commit is re-signed by the submitter (`--identity "Name <email>"`, else `git config
user.name/user.email` of this checkout): the author becomes the submitter and the
project's placeholder sign-off (base.toml's `[series] placeholder_identity`) is replaced
by the submitter's through `git interpret-trailers`; other trailers stay. No identity, or
the placeholder itself, is refused.

OUT (default pr-out/) gets `pr.bundle` with the branches, `<slug>.md` (the description,
patches/pr/<slug>.md in TE's PR template), `<slug>/` (the PR's commits as patches) and
SUMMARY.md listing each branch and its base.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from .check import lint_groups
from .core import (
    IDENTITY_RE,
    Series,
    SeriesError,
    am,
    failure_detail,
    format_patch,
    git,
    git_run,
    init_git_base,
    load_series,
    progress,
    rel,
    trailers,
)

MARKER = ".te-series-pr"


def identity(root: Path, given: str | None, series: Series) -> tuple[str, str]:
    """The submitter's (name, email); refuse none and the project's placeholder."""
    if given is None:
        name = git_run("config", "user.name", cwd=root).stdout.strip()
        email = git_run("config", "user.email", cwd=root).stdout.strip()
        if not name or not email:
            raise SeriesError(
                "no submitter identity: the commits must be signed off by you (DCO). Set "
                'git config user.name/user.email here, or pass --identity "Name <email>".'
            )
        given = f"{name} <{email}>"
    m = IDENTITY_RE.match(given.strip())
    if not m:
        raise SeriesError(f'--identity {given!r} is not "Name <email>"')
    placeholder = series.base_value("series", "placeholder_identity")
    p = IDENTITY_RE.match(placeholder)
    if given.strip() == placeholder.strip() or (p and p.group(2).lower() == m.group(2).lower()):
        raise SeriesError(
            f"{given} is the project's placeholder identity (base.toml [series] "
            "placeholder_identity), not a person: set your own (git config user.name/"
            'user.email, or --identity "Name <email>") to sign off the PRs.'
        )
    return m.group(1), m.group(2)


def resign(message: str, who: str, placeholder: str, cwd: Path) -> str:
    """The message with the placeholder's sign-off replaced by who's; other trailers kept."""
    found = trailers(message, cwd)
    drop = f"Signed-off-by: {placeholder}"
    if ("Signed-off-by", placeholder) in found:
        lines = message.rstrip("\n").split("\n")
        idx = max(i for i, l in enumerate(lines) if l.strip() == drop)
        message = "\n".join(lines[:idx] + lines[idx + 1 :]) + "\n"
    return git(
        "interpret-trailers",
        "--if-exists",
        "addIfDifferent",
        "--trailer",
        f"Signed-off-by: {who}",
        cwd=cwd,
        input=message,
    )


def prepare_out(out: Path, root: Path) -> None:
    """OUT must be empty or an earlier pr output (which is replaced)."""
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).exists():
            raise SeriesError(
                f"{rel(out, root)} is not empty and was not written by te-series pr; "
                "choose another --out"
            )
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text("written by te-series pr; replaced by the next run\n")


def run(args) -> int:
    root = args.root
    series = load_series(root)
    names = series.names()
    groups, problems = series.groups()
    if not groups:
        raise SeriesError(
            f"{series.label} has no '# pr: <slug>' lines; group the patches into PRs first"
        )
    problems += lint_groups(series)
    if problems:
        raise SeriesError("PR groups:\n  " + "\n  ".join(dict.fromkeys(problems)))
    if args.te_src is None:
        raise SeriesError("pr needs a git base: --te-src PATH (a TE checkout with the base)")
    name, email = identity(root, args.identity, series)
    who = f"{name} <{email}>"
    placeholder = series.base_value("series", "placeholder_identity")
    out = args.out or root / "pr-out"
    with tempfile.TemporaryDirectory(prefix="te-series-pr-") as tmp:
        repo = Path(tmp) / "repo"
        base = init_git_base(repo, args.te_src, series.base_commit)
        msg_file = Path(tmp) / "msg"
        summary, prev = [], base
        for slug, group in groups:
            for patch in group:
                progress(f"pr/{slug}: {patch}")
                proc = am(repo, series.dir / patch)
                if proc.returncode != 0:
                    raise SeriesError(failure_detail(repo, series.dir / patch, None, proc))
                msg_file.write_text(
                    resign(git("log", "-1", "--format=%B", cwd=repo), who, placeholder, repo)
                )
                date = git("log", "-1", "--format=%aI", cwd=repo).strip()
                env = {
                    "GIT_AUTHOR_NAME": name,
                    "GIT_AUTHOR_EMAIL": email,
                    "GIT_COMMITTER_NAME": name,
                    "GIT_COMMITTER_EMAIL": email,
                    "GIT_AUTHOR_DATE": date,
                    "GIT_COMMITTER_DATE": date,
                }
                git(
                    "commit", "-q", "--amend", "--no-verify", "--reset-author",
                    "--cleanup=verbatim", "-F", str(msg_file), cwd=repo, env=env,
                )  # fmt: skip
            git("branch", "-f", f"pr/{slug}", "HEAD", cwd=repo)
            summary.append((slug, prev, group))
            prev = f"pr/{slug}"
        prepare_out(out, root)
        branches = [f"pr/{slug}" for slug, _ in groups]
        git("bundle", "create", "-q", str(out / "pr.bundle"), *branches, f"^{base}", cwd=repo)
        for slug, on, _ in summary:
            shutil.copy2(series.dir / "pr" / f"{slug}.md", out / f"{slug}.md")
            format_patch(repo, f"{on}..pr/{slug}", out / slug)
    write_summary(out, base, who, summary)
    print(f"{len(groups)} PR branch(es), {len(names)} commit(s), signed off by {who}:")
    print((out / "SUMMARY.md").read_text())
    return 0


def write_summary(out: Path, base: str, who: str, summary) -> None:
    lines = [
        "# PR branches",
        "",
        f"Upstream base: {base}. Commits authored and signed off by {who}.",
        "",
        "| branch | base | commits | description |",
        "|---|---|---|---|",
    ]
    for slug, on, group in summary:
        base_name = on if on.startswith("pr/") else f"upstream {on[:12]}"
        lines.append(f"| pr/{slug} | {base_name} | {len(group)} | {slug}.md |")
    lines += [
        "",
        "In your TE checkout:",
        "",
        f"    git fetch {out / 'pr.bundle'} 'refs/heads/pr/*:refs/heads/pr/*'",
        "    git push <your fork> " + " ".join(f"pr/{s}" for s, _, _ in summary),
        "",
        "Open the PRs in order; each one's base is the branch before it (the first: main).",
    ]
    (out / "SUMMARY.md").write_text("\n".join(lines) + "\n")
