"""The one git door (`git_run`): every git the tool runs gets pinned settings and a clean
environment, runs whole (a Ctrl-C lands between two git steps), and is named in errors.
Also the small git steps the tool shares: format-patch, mailinfo, trailers, notes.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
import tempfile
from functools import partial
from pathlib import Path

from .util import no_interrupt, rel, SERIES_BRANCH, SeriesError


# Each commit that came from a patch file carries that file's name in this notes ref.
# git copies notes when it rewrites commits (rebase, amend), so the name follows a
# patch through the user's edits; squashed commits carry both names.
NOTES_REF = "refs/notes/te-series"


# Identity used for the synthetic base commit of a PyPI base and as `git am`'s committer.
BOT = {
    "GIT_AUTHOR_NAME": "te-series",
    "GIT_AUTHOR_EMAIL": "te-series@invalid",
    "GIT_COMMITTER_NAME": "te-series",
    "GIT_COMMITTER_EMAIL": "te-series@invalid",
    # Stable dates so a rebuilt base has the same commit id.
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}


# Settings every git the tool runs gets, whatever the user's config (global, system or the
# work tree's own) says: nothing of the user's may change what am, format-patch, rebase,
# notes and log make or print. Signing, hooks (core.hooksPath, .git/hooks), git attributes
# outside the tree (core.attributesFile; the system's are off through GIT_ATTR_NOSYSTEM),
# message encodings, whitespace fixing (apply.whitespace=fix rewrites patch content),
# line-ending conversion (core.autocrlf rewrites a file te-series commits), notes rewriting
# (the patch names ride on notes through the tool's rebase), message cleanup (a rebase or a
# commit must not drop a message's `#` lines: `whitespace`, as am reads a message, and no
# status help in the message; `verbatim` would keep the blank line an edited message gets),
# what a user setting adds to the output the tool reads (a signature check before each
# commit of a `git log`, colours), and how a rebase goes (other branches, backend, rerere). Each is tested (tests/test_git_isolation.py). format-patch reads no .gitattributes of the tree
# (format_patch); .git/info/attributes is refused where it would change a patch
# (refuse_info_attributes), and a merge driver wherever git merges (refuse_merge_drivers).
PINNED = {
    "commit.gpgsign": "false",
    "core.hooksPath": os.devnull,
    "core.attributesFile": os.devnull,
    "i18n.commitEncoding": "UTF-8",
    "i18n.logOutputEncoding": "UTF-8",
    "apply.whitespace": "nowarn",
    "core.autocrlf": "false",
    "notes.rewrite.rebase": "true",
    # a low threshold turns every patch into a GIT binary patch (format-patch, diff)
    "core.bigFileThreshold": "512m",
    # the user's global ignores would hide a new file in fork/ from export's refusal
    "core.excludesFile": os.devnull,
    "commit.cleanup": "whitespace",
    "commit.status": "false",
    "log.showSignature": "false",
    # color.ui is only the default: a command's own colour setting wins over it
    # (color.diff=always coloured the `git log -p` whose patch ids find upstream's commits,
    # v16 #3), so each is pinned
    **{f"color.{k}": "never" for k in ("ui", "diff", "branch", "status", "grep", "showBranch",
                                        "interactive", "advice", "push", "remote", "transport")},  # fmt: skip
    # the tool's rebase moves the series branch alone, by one backend, resolving nothing by
    # itself (updateRefs moved the user's other branches along, v13 #3)
    "rebase.updateRefs": "false",
    "rebase.backend": "merge",
    "rebase.autoStash": "false",
    "rebase.autoSquash": "false",
    "rerere.enabled": "false",
    # merge.default=union resolved every conflict by keeping both sides (v26 #1); an empty
    # name is no driver's, so git merges text, as without the setting
    "merge.default": "",
    # what git am writes into a commit: a Message-Id header copied into the message on each
    # apply (am.messageid, v22 R1), cut messages, stripped CRs
    "am.messageid": "false",
    "am.keepcr": "true",
    "mailinfo.scissors": "false",
}


# The same for a git the user runs from the tool's advice that rewrites messages (rebase -i).
KEEP_MESSAGES = "-c commit.cleanup=whitespace -c commit.status=false"


GIT_OVERRIDES = tuple(a for k, v in PINNED.items() for a in ("-c", f"{k}={v}"))


# The caller's git variables that the tool passes on: where git finds its programs, and
# which config files it reads (GIT_CONFIG_GLOBAL, GIT_CONFIG_NOSYSTEM, GIT_CONFIG_COUNT...:
# config, from whatever file, is the user's, and PINNED overrides what matters). Every
# other GIT_* variable is dropped: they point git at another repository, index or object
# store (GIT_DIR, GIT_WORK_TREE, GIT_INDEX_FILE, as a hook or `git -c` leaves them),
# override the notes a rebase must carry (GIT_NOTES_*, tool-review-v7 #3), or change what a
# diff prints (GIT_DIFF_OPTS=--unified=0 rewrote every patch, tool-review-v8) or the ids
# it computes (GIT_DEFAULT_HASH=sha256: 64-digit ids, never base.toml's). One rule for the
# whole class.
def _passed_on(name: str) -> bool:
    return not name.startswith("GIT_") or name == "GIT_EXEC_PATH" or name.startswith("GIT_CONFIG")


def git_env(extra: dict | None = None) -> dict:
    """The environment of every git the tool runs: the caller's without git's own
    variables (but those of `_passed_on`), plus the tool's identity and `extra`."""
    env = {k: v for k, v in os.environ.items() if _passed_on(k)}
    # git's words in English, which the tool reads (its hunks, its hints; v20 #11)
    env.update(LC_ALL="C.UTF-8", LANGUAGE="")
    return {**env, **BOT, "GIT_ATTR_NOSYSTEM": "1", **(extra or {})}


def git(
    *args: str,
    cwd: Path | str,
    check: bool = True,
    env: dict | None = None,
    input: str | None = None,
) -> str:
    """Run git and return stdout. Raise SeriesError carrying git's own message on failure."""
    proc = git_run(*args, cwd=cwd, env=env, input=input)
    if check and proc.returncode != 0:
        said = proc.stderr.strip() or proc.stdout.strip()
        refuse_full_disk(args[0], said, Path(cwd))  # a lock git could not write (v33 #4)
        raise SeriesError(f"git {' '.join(args)} failed in {cwd}:\n{said}")
    return proc.stdout


def refuse_full_disk(step: str, said: str, folder: Path | None = None) -> None:
    """The stop for a git that could not write for want of space: not the series' doing
    (v28 #3). With `folder` (where git wrote), also less than 1 MiB left there: git's words
    for a lock it could not write name no disk (v33 #4), and git mailinfo cuts its output
    short without a word, exit 0 (v32 #1)."""
    if re.search(r"No space left on device|Out of diskspace", said):
        said = said.strip().splitlines()[-1]
    else:
        try:
            room = os.statvfs(folder) if folder is not None else None
        except OSError:  # no such folder: not the disk's doing
            return
        if room is None or room.f_bavail * room.f_frsize >= 1 << 20:
            return
        said = "; ".join(filter(None, [*said.strip().splitlines()[-1:], "less than 1 MiB free"]))
    raise SeriesError(
        f"the disk is full: git {step} could not write ({said}). Make room, then run the same "
        "te-series command again (te-series status shows where things stand)."
    )


def git_run(
    *args: str,
    cwd: Path | str,
    env: dict | None = None,
    input: str | bytes | None = None,
    text: bool | None = None,
) -> subprocess.CompletedProcess:
    """Run git, return the finished process (check returncode yourself): the one door.

    Every git step runs whole: git runs in a session of its own (a terminal's Ctrl-C does
    not reach it) and a Ctrl-C meanwhile is held until it has finished, then raised. So the
    tool is only ever interrupted between two git steps, never inside one (a half-written
    am, index or checkout). A git killed by SIGINT all the same (kill -INT of git itself) is
    reported as the interruption it is.

    """
    as_text = not isinstance(input, bytes) if text is None else text
    if args and args[0] in MERGING and not {"--abort", "--quit"} & set(args):
        refuse_merge_drivers(Path(cwd))
    with no_interrupt():
        proc = subprocess.run(
            ["git", *GIT_OVERRIDES, *args],
            cwd=cwd,
            capture_output=True,
            env=git_env({**own_repository(Path(cwd)), **(env or {})}),
            input=input.encode("utf-8", "surrogateescape") if isinstance(input, str) else input,
            check=False,
            start_new_session=True,
        )
    if as_text:  # UTF-8 both ways, as PINNED has git write messages, whatever the locale (a
        # Latin-1 one misread them, v19 F1); a name that is not UTF-8 kept (v15 #2); a
        # carriage return kept, as git wrote it (text mode's newlines made it a line end, v20 #8)
        proc.stdout, proc.stderr = (b.decode("utf-8", "surrogateescape")
                                    for b in (proc.stdout, proc.stderr))  # fmt: skip
    if proc.returncode == -signal.SIGINT:
        raise KeyboardInterrupt
    said = proc.stderr if isinstance(proc.stderr, str) else proc.stderr.decode(errors="replace")
    if proc.returncode and own_repository(Path(cwd)) and "fatal: not a git repository" in said:
        raise SeriesError(
            f"{cwd}/.git is there, but git cannot read it as a repository ({said.strip()}). An "
            f"empty or damaged HEAD file: printf 'ref: refs/heads/{SERIES_BRANCH}\\n' > "
            f"{shlex.quote(str(cwd))}/.git/HEAD; else move the folder aside (mv "
            f"{shlex.quote(str(cwd))} {shlex.quote(str(cwd) + '.broken')}) and run te-series "
            "apply again"
        )
    if proc.returncode < 0:
        raise SeriesError(
            f"git {' '.join(args)} in {cwd} was killed by signal {-proc.returncode}; "
            "run te-series status to see where things stand"
        )
    return proc


# The gits that merge a patch into a tree (its 3-way merge).
MERGING = {"am", "rebase", "cherry-pick", "merge", "revert"}


def refuse_merge_drivers(tree: Path) -> None:
    """Refuse a merge driver (`merge=NAME`) in tree's .git/info/attributes or in a
    .gitattributes of its files: git would resolve a conflict of a patch by itself (union
    keeps both sides; a driver of the user's config does what it does), and the patch would
    change with no stop (v26 #1). Read here, not by git (no git step is added), but where
    .git is a file (a git dir elsewhere: git tells where, v27 #1)."""
    git_dir = tree / ".git"
    info = git_dir / "info/attributes" if git_dir.is_dir() else git_path(tree, "info/attributes")
    found = [info] if info.is_file() else []
    for folder, subdirs, files in os.walk(tree):
        subdirs[:] = [d for d in subdirs if d != ".git"]
        found += [Path(folder) / ".gitattributes"] if ".gitattributes" in files else []
    for path in found:
        try:
            lines = path.read_text(errors="replace").splitlines()
        except OSError:  # a link to nothing: git reads no attributes there either
            continue
        for n, line in enumerate(lines, 1):
            driver = [a for a in line.split()[1:] if a.startswith("merge=")]
            if driver and not line.lstrip().startswith("#"):
                where = rel(path, tree.parent)
                raise SeriesError(
                    f"{where}, line {n}, sets a merge driver ({driver[0]}): git would resolve "
                    f"a conflict of a patch by itself and change the patch with no stop. "
                    f"Remove that line (or the file), then go on as te-series status says; "
                    f"git did not run."
                )


def own_repository(cwd: Path) -> dict:
    """A folder with a .git of its own is that repository or none, never one above it: a tree
    whose .git git cannot read (an empty HEAD) was taken for the project's own (v16 #6)."""
    return {"GIT_CEILING_DIRECTORIES": str(cwd.absolute().parent)} if (cwd / ".git").exists() else {}


def blob_id(data: bytes) -> str:
    """Git blob id of some bytes (what `git hash-object` prints)."""
    import hashlib

    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def git_path(repo: Path, name: str) -> Path:
    """Where git keeps `name` for this repository (`git rev-parse --git-path`)."""
    return repo / git("rev-parse", "--git-path", name, cwd=repo).strip()


def in_progress(repo: Path) -> str | None:
    """Name a git operation left unfinished in repo (am, rebase, cherry-pick, merge)."""
    rebase_apply = git_path(repo, "rebase-apply")
    if rebase_apply.exists() and not (rebase_apply / "rebasing").exists():
        return "a git am"  # "applying" marks it, but a half-made am dir is an am too
    if rebase_apply.exists() or git_path(repo, "rebase-merge").exists():
        return "a git rebase"
    for head, what in (
        ("CHERRY_PICK_HEAD", "a git cherry-pick"),
        ("REVERT_HEAD", "a git revert"),
        ("MERGE_HEAD", "a git merge"),
        ("BISECT_LOG", "a git bisect"),
    ):
        if git_path(repo, head).exists():
            return what
    return None


def object_id(repo: Path, spec: str) -> str:
    """The object id spec names in repo (`git rev-parse --verify`), or "" when it names none."""
    return git_run("rev-parse", "-q", "--verify", spec, cwd=repo).stdout.strip()


def log1(repo: Path, fmt: str, spec: str = "HEAD") -> str:
    """One commit shown in a `git log --format` (stripped); "" when spec names none."""
    return git_run("log", "-1", f"--format={fmt}", spec, cwd=repo).stdout.strip()


def conflicted(repo: Path) -> list[str]:
    """The files git left with conflict markers (unmerged in the index)."""
    return git_run("diff", "--name-only", "--diff-filter=U", cwd=repo).stdout.splitlines()


def rebase_stop(repo: Path) -> tuple[str, str]:
    """The commit a git rebase stopped on (REBASE_HEAD) and its subject; ("", "") if none."""
    stop = object_id(repo, "REBASE_HEAD")
    return stop, log1(repo, "%s", stop) if stop else ""


def rebase_file(repo: Path, name: str) -> str:
    """A file of the merge backend's rebase-merge/ (done, onto, ...), "" when there is none."""
    at = git_path(repo, "rebase-merge") / name
    return at.read_text("utf-8", "replace") if at.is_file() else ""


def picked(repo: Path, name: str, last: bool = True) -> str:
    """The commit of the last (or first) line of rebase-merge/`name` when it is a pick."""
    lines = rebase_file(repo, name).splitlines() or [""]
    op, _, rest = lines[-1 if last else 0].partition(" ")
    return object_id(repo, f"{rest.partition(' ')[0]}^{{commit}}") if op in ("pick", "p") else ""


def refused_pick(repo: Path) -> str:
    """A pick git refused before it wrote anything (a file of yours where the patch writes,
    v21 #6) and put back as the next to do; "" if none. Its stop stays (git before 2.42):
    a continue would commit what is staged as that patch, or take it for resolved to nothing.
    It is in done, not always last (git 2.39 can list the pick before it after it, v22 R11)."""
    rev = picked(repo, "git-rebase-todo", last=False)
    done = [line.split()[1:2] for line in rebase_file(repo, "done").splitlines()]
    return rev if rev and any(rev.startswith(*d) for d in done if d) else ""


def unfinished_pick(repo: Path, take: bool = False) -> str:
    """The commit a git rebase died picking (a full disk, a killed git): done's last pick,
    neither committed (rewritten-list) nor a stop (REBASE_HEAD, message); one it refused
    (refused_pick); or, where it died checking out its new base, before any pick, that base
    (its onto, which HEAD is not on: v19 F4). "" if none, or if HEAD is it picked by hand
    (with take, noted as its patch)."""
    at, key = git_path(repo, "rebase-merge"), "%an <%ae> %ad%n%B"
    read = partial(rebase_file, repo)
    if not read("done").strip():
        onto = read("onto").strip()
        return onto if onto and object_id(repo, "HEAD") != onto else ""
    refused = refused_pick(repo)
    rev = refused or picked(repo, "done")
    stopped = (at / "message").exists() or object_id(repo, "REBASE_HEAD")
    if not rev or (stopped or rev in read("rewritten-list")) and not refused:
        return ""
    names = note_names(repo, rev)
    if not note_names(repo, "HEAD") and log1(repo, key) == log1(repo, key, rev):
        if take and names:
            set_note(repo, "HEAD", "\n".join(names))
        return ""
    return rev


def cannot_write(tree: Path, root: Path) -> str:
    """What to fix where git could not do its work in tree, though the patch is fine (a full
    disk, a killed git's index.lock): the one advice of apply's and rebase's stops, after
    which their --continue runs the patch again (v11 #5, v16 #2)."""
    lock = git_path(tree, "index.lock")
    if lock.exists():
        return (f"{rel(lock, root)} is there: a git that was killed left it; once no other git "
                f"runs in {rel(tree, root)}/, remove it (rm {rel(lock, root)})")  # fmt: skip
    return ("fix what git said (a full disk, a file or folder git may not write, a link; "
            "changes of yours to the patch's files, which --continue keeps in a stash)")  # fmt: skip


def pick_not_finished(repo: Path, rev: str) -> str:
    """The stop (and status line) of a pick git died in or refused: --continue picks it again."""
    names = ", ".join(note_names(repo, rev)) or "(a new commit)"
    if refused_pick(repo) == rev:
        return (
            f"git would not pick patch {names} ({log1(repo, '%s', rev)!r}): fork/ has files of "
            "yours where it writes (untracked, or changed: git -C fork status shows them), not "
            "the patch's doing. te-series rebase --continue puts them in a stash (git -C fork "
            "stash list), never away, and picks the patch. Or give up: te-series rebase --abort."
        )
    step, again = (
        (f"checking out {rev[:12]}, the commit the series moves onto: it died before the first "
         "patch, with fork/ still on the series", "checks it out again and picks the patches")
        if rev == rebase_file(repo, "onto").strip() else
        (f"picking patch {names} ({log1(repo, '%s', rev)!r}): it died mid-pick", "picks it again")
    )  # fmt: skip
    return (
        f"git did not finish {step} (a full disk? a killed git?), not at a conflict: not the "
        f"patch's doing. Fix that: {cannot_write(repo, repo.parent)}; then te-series rebase "
        f"--continue {again} (what git half wrote goes into a stash, never away). Or give up: "
        "te-series rebase --abort."
    )


def git_said(proc, last: int = 20, edit=lambda line: line) -> str:
    """What a git run said, for a message: its last lines, indented, without its hints and
    its own ways on (`run "git am --continue"`: the tool's message says how to go on, in a
    tree that may be a throw-away clone, v12 #13)."""
    lines = [edit(l) for l in (proc.stdout + proc.stderr).splitlines()
             if l.strip() and not l.startswith("hint:") and 'run "git ' not in l]  # fmt: skip
    return "".join(f"  {l}\n" for l in lines[-last:])


def is_ancestor(repo: Path, a: str, b: str) -> bool:
    return git_run("merge-base", "--is-ancestor", a, b, cwd=repo).returncode == 0


def patch_ids(repo: Path, *revs: str) -> dict[str, str]:
    """Commit -> `git patch-id --stable` of its change, for the commits `git log revs` shows."""
    diffs = git_run("log", "-p", "--no-renames", "--format=commit %H", *revs, cwd=repo, text=False)
    ids = git_run("patch-id", "--stable", cwd=repo, input=diffs.stdout).stdout.decode().split()
    return dict(zip(ids[1::2], ids[0::2]))


def file_patch_id(repo: Path, patch: Path) -> str:
    """`git patch-id --stable` of a patch file's change ("" for a file with no diff)."""
    out = git_run("patch-id", "--stable", cwd=repo, input=patch.read_bytes()).stdout.split()
    return (out or [b""])[0].decode()


def merged_from_outside(repo: Path, base: str, *tips: str) -> dict[str, list[str]]:
    """Merge -> its parents that share no commit above base with its first parent (upstream's,
    by a git pull; not a branch of yours off the series), for the merges of tips' history."""
    out = git_run("rev-list", "--merges", "--parents", *tips, f"^{base}", cwd=repo).stdout
    bases = lambda one, p: git_run("merge-base", "--all", one, p, cwd=repo).stdout.split()  # noqa
    found = {m: [p for p in ps if all(is_ancestor(repo, b, base) for b in bases(one, p))]
             for m, one, *ps in map(str.split, out.splitlines())}  # fmt: skip
    return {m: ps for m, ps in found.items() if ps}


def pulled_in(repo: Path, base: str, revs: list[str]) -> set[str]:
    """Those of revs that are, or have the patch-id of, a commit that a merge brought into the
    series branch from outside (its reflog keeps the merge a rebase took out, v14 #1)."""
    tips = git_run("log", "-g", "--format=%H", f"refs/heads/{SERIES_BRANCH}", cwd=repo).stdout
    sides = {p for ps in merged_from_outside(repo, base, *set(tips.split())).values() for p in ps}
    if not revs or not sides:
        return set()
    paths = git("log", "--no-walk", "-z", "--format=", "--name-only", *revs, cwd=repo).split("\0")
    theirs = git("--literal-pathspecs", "rev-list", "--no-merges", *sides, f"^{base}", "--",
                 *{n.strip("\n") for n in paths} - {""}, cwd=repo).split()  # fmt: skip
    same = set(patch_ids(repo, "--no-walk", *theirs).values()) if theirs else set()
    mine = patch_ids(repo, "--no-walk", *revs)
    return {r for r in revs if r in theirs or mine.get(r) in same}


# One definition of the format-patch arguments (export, port, pr, rebase). Every option
# that a git config key could change is given here (or as a -c override), so neither the
# user's global config nor the work tree's own .git/config changes the patches; with them a
# re-export of unchanged commits is byte-identical.
FORMAT_PATCH_ARGS = (
    "-c",
    "diff.suppressBlankEmpty=false",
    "-c",
    "core.quotePath=true",
    "format-patch",
    "--zero-commit",
    "--no-signature",
    "--full-index",
    "--no-numbered",
    "--no-renames",
    "--subject-prefix=PATCH",
    "--no-cover-letter",
    "--no-notes",
    "--no-thread",
    "--no-base",
    "--no-attach",
    "--encode-email-headers",
    "--filename-max-length=64",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--suffix=.patch",  # format.suffix
    "--no-add-header",  # format.headers
    "--no-to",  # format.to
    "--no-cc",  # format.cc
    "--no-from",  # format.from
    "--no-signoff",  # format.signOff
    "--no-force-in-body-from",  # format.forceInBodyFrom
    "-U3",  # diff.context
    "--inter-hunk-context=0",  # diff.interHunkContext
    "--diff-algorithm=myers",  # diff.algorithm
    "-O/dev/null",  # diff.orderFile
    "--no-relative",  # diff.relative
    "--indent-heuristic",  # diff.indentHeuristic
    "--submodule=short",  # diff.submodule
)


# No config file or `-c` of the user's is read (the door's PINNED still apply).
NO_CONFIG = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_COUNT": "0",
             "GIT_CONFIG_PARAMETERS": ""}  # fmt: skip


def format_patch(repo: Path, revs: str, out: Path) -> list[Path]:
    """`git format-patch` revs into out; the files in order.

    It runs on repo's git dir with an empty work tree and index, so that no .gitattributes
    in repo's files (committed or not: TE has none) makes a patch binary or changes its
    hunk headers (tool-review-v9 #1); .git/info/attributes is refused instead.
    """
    refuse_info_attributes(repo, revs)
    gitdir = git("rev-parse", "--absolute-git-dir", cwd=repo).strip()
    with tempfile.TemporaryDirectory(prefix="te-series-format-") as empty:
        env = {**NO_CONFIG, "GIT_INDEX_FILE": os.path.join(empty, "index")}
        where = (f"--git-dir={gitdir}", f"--work-tree={empty}")
        out = Path(out).resolve()
        listed = git(*where, *FORMAT_PATCH_ARGS, "-o", str(out), revs, cwd=empty, env=env)
    return [Path(line) for line in listed.splitlines() if line]


def refuse_info_attributes(repo: Path, revs: str) -> None:
    """Refuse .git/info/attributes that set `diff` (-diff, binary, diff=DRIVER) on a file of
    revs: format-patch would write it as a binary patch or with other hunk headers.

    The file is read on its own (as core.attributesFile of an empty repository).
    """
    info = git_path(repo, "info/attributes")
    if not info.is_file():
        return
    names = git("log", "--format=", "--name-only", "--no-renames", "-z", revs, cwd=repo)
    files = list(dict.fromkeys(n for n in names.split("\0") if n.strip()))
    if not files:
        return
    with tempfile.TemporaryDirectory(prefix="te-series-attr-") as tmp:
        git("init", "-q", cwd=tmp)
        out = git(
            "-c", f"core.attributesFile={info}", "check-attr", "--stdin", "-z", "diff",
            cwd=tmp, input="\0".join(files),
        ).split("\0")  # fmt: skip
    found = [
        f"{path}: diff {value}" for path, _, value in zip(out[0::3], out[1::3], out[2::3])
        if value != "unspecified"
    ]  # fmt: skip
    if found:
        where = rel(info, repo)
        raise SeriesError(
            f"{repo.name}/{where} sets the diff attribute (-diff, binary or diff=DRIVER) on "
            f"file(s) of the series: {'; '.join(found[:5])}. format-patch would write them as "
            f"binary patches or with other hunk headers. Remove those lines from "
            f"{repo.name}/{where} (or the file), then run again; nothing was written."
        )


def interpret_trailers(message: str, *args: str) -> str:
    """`git interpret-trailers` of a message, the same for every user: no config (a user's
    trailer.ifMissing, .where, .separators or trailer.<token>.* moved or dropped the sign-off,
    v12 #3), outside any repository, and a comment character no line of the message starts
    with (git skips trailing comment lines, so a last `#` paragraph went below the trailers,
    v12 #2)."""
    starts = {line[:1] for line in message.split("\n")}
    char = next((c for c in "#;@!$%^&*|~=+" if c not in starts), "#")
    with tempfile.TemporaryDirectory(prefix="te-series-trailers-") as tmp:
        return git("-c", f"core.commentChar={char}", "interpret-trailers", *args, cwd=tmp,
                   env=NO_CONFIG, input=message)  # fmt: skip


# A message line that git's default cleanup drops as a comment, and what to do about it.
COMMENT_LINE = (
    "starts with '#': git's default message cleanup (an editor, a git rebase --continue) drops "
    "it as a comment. Delete it where git left it (e.g. '# Conflicts:' after a conflict), else "
    "reword it so that '#' is not its first character (e.g. 'PR #3410 ...')"
)


def comment_lines(message: str) -> list[tuple[int, str]]:
    """The lines of a message (numbered from 1, the subject) that git's default cleanup drops."""
    return [(n, line) for n, line in enumerate(message.split("\n"), 1) if line.startswith("#")]


def trailers(message: str) -> list[tuple[str, str]]:
    """The trailers of a commit message, as git reads them (`interpret-trailers --parse`)."""
    out = interpret_trailers(message, "--parse")
    pairs = []
    for line in out.splitlines():
        key, _, value = line.partition(":")
        pairs.append((key.strip(), value.strip()))
    return pairs


class SplitMail(SeriesError):
    """A patch file that `git mailsplit` reads as more than one mail: git am would make a
    commit of each. `line` is the file's line that starts the second mail."""

    def __init__(self, text: str, line: str):
        super().__init__(text)
        self.line = line


def mailinfo(data: bytes, where: Path, label: str) -> tuple[dict[str, str], str, str]:
    """A patch read as `git am -3 --keep-cr --keep-non-patch` reads it: `git mailsplit`, then
    `git mailinfo` of its one mail.

    Returns the headers (Author, Email, Subject), the message body and the patch text
    (decoded as UTF-8; undecodable bytes kept as surrogates, never an error). A file that
    mailsplit cuts into several mails is refused (SplitMail), naming the line that starts
    the second one.
    """
    if data.startswith(b"\xef\xbb\xbf"):  # v21 #7: mailsplit said "corrupt mailbox"
        raise SeriesError(
            f"{label} starts with a byte-order mark (an editor wrote it), which git am cannot "
            f"read. Take it off (sed -i '1s/^\\xEF\\xBB\\xBF//' {shlex.quote(str(where / label))}"
            "), commit that, and run the command again."
        )
    with tempfile.TemporaryDirectory(prefix="te-series-mailinfo-") as tmp:
        mbox, mails = Path(tmp) / "mbox", Path(tmp) / "mails"
        mbox.write_bytes(data)
        mails.mkdir()
        split = git_run("mailsplit", "--keep-cr", f"-o{mails}", "--", str(mbox), cwd=where)
        refuse_full_disk("mailsplit", split.stderr if split.returncode else "")
        parts = sorted(mails.iterdir())
        if split.returncode != 0 or not parts:
            said = split.stderr.strip().replace(str(mbox), label) or "no mail in it"
            path = shlex.quote(str(where / label))
            raise SeriesError(
                f"git mailsplit cannot read {label}: {said}. It is no mail as git format-patch "
                f"writes one (a lost first line? an empty file?): restore it (git checkout HEAD "
                f"-- {path}, where the damage is not committed; else git log --oneline -- "
                f"{path} lists its versions: git checkout REV -- {path}), then run the command "
                "again."  # v23 #9, v25 F1
            )
        if len(parts) > 1:
            # Each mail keeps its "From " line: the second one's is the line after the first
            # mail's.
            at = parts[0].read_bytes().count(b"\n") + 1
            line = data.split(b"\n")[at - 1].decode("utf-8", "replace").rstrip("\r")
            raise SplitMail(
                f"{label} is {len(parts)} mails to git am: its line {at}, {line!r}, looks like "
                'the first line of a mail ("From <word> <date>"), so git am would make '
                f"{len(parts)} commits of it and cut the message there. Indent that line in "
                f"{label} (or write it another way), commit the file, then run the command "
                "again (a commit message in fork/ with such a line is refused by export).",
                line,
            )
        msg, patch = Path(tmp) / "msg", Path(tmp) / "patch"
        args = ["mailinfo", "-b", "--no-scissors", "--encoding=UTF-8", str(msg), str(patch)]
        proc = git_run(*args, cwd=where, input=parts[0].read_bytes())
        refuse_full_disk("mailinfo", proc.stderr.decode("utf-8", "replace"), Path(tmp))
        if proc.returncode != 0:
            said = proc.stderr.decode("utf-8", "replace").strip()
            raise SeriesError(f"git mailinfo cannot read {label}: {said}")
        headers = {}
        for line in proc.stdout.decode("utf-8", "replace").splitlines():
            key, sep, value = line.partition(": ")
            if sep:
                headers[key] = value
        who = {"GIT_AUTHOR_NAME": headers.get("Author", ""), "GIT_AUTHOR_EMAIL":
               headers.get("Email", ""), "GIT_AUTHOR_DATE": headers.get("Date") or "@0 +0000"}  # fmt: skip
        who = {k: os.fsdecode(v.encode()) for k, v in who.items()}  # UTF-8 in any locale
        ident = git_run("var", "GIT_AUTHOR_IDENT", cwd=tmp, env=who)  # am's author (v22 R3)
        if ident.returncode != 0:
            raise SeriesError(
                f"git am cannot take {label}'s author from its mail header (its From: and "
                f"Date: lines): {ident.stderr.strip().removeprefix('fatal: ')}. Write them as git "
                "does (From: Name <name@example.org>, Date: Mon, 1 Dec 2025 12:00:00 +0000) "
                f"in {label}, commit the file, then run the command again."
            )
        body = msg.read_bytes().decode("utf-8", "replace").strip("\n")  # keep an indent (v12 #8)
        diff = patch.read_bytes().decode("utf-8", "surrogateescape")
    return headers, body, diff


def init_repo_config(repo: Path) -> None:
    """Let git carry the patch-name notes through rebases and amends; and let the user's git
    in the tree convert no line ends, as the tool's does not (a global core.autocrlf wrote
    CRLF files that only the tool saw as edits, v12 #11)."""
    git("config", "notes.rewriteRef", NOTES_REF, cwd=repo)
    git("config", "core.autocrlf", "false", cwd=repo)


def note_names(repo: Path, rev: str) -> list[str]:
    """The patch file names noted on a commit (several after a squash)."""
    out = git_run("notes", f"--ref={NOTES_REF}", "show", rev, cwd=repo)
    if out.returncode != 0:
        return []
    # One name a line: a name may hold spaces; never a path (`../x` deleted x: v35 #5), so a
    # line that is no bare file name is no patch's name.
    names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    return [n for n in names if "/" not in n and "\\" not in n and n not in (".", "..")]


def names_in(repo: Path, revs: str) -> set[str]:
    """The patch names noted on the commits of revs."""
    return {n for r in commits(repo, revs) for n in note_names(repo, r)}


def set_note(repo: Path, rev: str, name: str) -> None:
    """Note patch file name(s) on a commit (several names: one a line)."""
    git("notes", f"--ref={NOTES_REF}", "add", "-f", "-m", name, rev, cwd=repo)


def commits(repo: Path, revs: str) -> list[str]:
    """Commit ids of revs, oldest first."""
    return git("rev-list", "--reverse", revs, cwd=repo).split()


def untracked(repo: Path) -> list[str]:
    out = git("ls-files", "--others", "--exclude-standard", "-z", cwd=repo)
    return [p for p in out.split("\0") if p]
