"""`te-series export`: write base..HEAD of fork/ back to patches/ and update series:
stable (every option a git config key could change given, git.FORMAT_PATCH_ARGS, so a
re-export of unchanged commits is byte-identical), and refusing whatever would drop, undo or
misstate the series, each refusal with a way past it (README: What the tool guarantees).
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import os
import re
import shlex
import tempfile
from pathlib import Path

from .util import no_interrupt, rel, SERIES_BRANCH, SeriesError, write_atomic
from .git import (
    blob_id,
    COMMENT_LINE,
    comment_lines,
    commits,
    format_patch,
    git,
    git_path,
    git_run,
    in_progress,
    is_ancestor,
    KEEP_MESSAGES,
    log1,
    mailinfo,
    merged_from_outside,
    note_names,
    object_id,
    file_patch_id,
    patch_ids,
    pulled_in,
    set_note,
    SplitMail,
    untracked,
)
from .series import load_series, NO_BINARY, parse_diff, read_patch, Series
from .base import prerequisite_top, UPSTREAM
from .worktree import (
    changed_since_made,
    describe_tree,
    drop_args,
    file_id,
    no_record,
    not_a_work_tree,
    off_the_series_branch,
    patch_owners,
    read_state,
    record_file,
    settle,
    State,
    unfinished_port,
    WorkTree,
    write_state,
)


def check_tree(tree: Path, root: Path, state: State | None = None) -> State:
    """Refuse a work tree that cannot be exported as it is; return its recorded state.

    `state` stands in for the recorded one (a rebase that is being finished).
    """
    name = rel(tree, root)
    verbs = WorkTree.at(tree).verbs(state)
    if (tree / ".git").exists() or not tree.exists():  # a rebuild waits: say so first (v10 #3)
        pending = WorkTree.at(tree).new
        if pending.exists():
            where = rel(pending, root)
            finish = "Finish it as said above, or give it up"
            raise SeriesError(
                f"{where}/ holds a rebuild of {name}/ that is not swapped in yet:\n"
                f"{describe_tree(pending, root)}\nAn export from {name}/ now could undo what "
                f"that rebuild is for. {'Give it up' if read_state(pending) is None else finish}"
                f": move {where}/ out of the way (e.g. mv {where} {where}.old), then export again."
            )
    if not (tree / ".git").exists():
        if tree.exists() or tree.is_symlink():
            raise not_a_work_tree(tree, root)
        raise SeriesError(f"{name}/ does not exist. Make it first: {verbs['make']}")
    busy = in_progress(tree)
    if busy:
        how = {
            "a git am": f"{verbs['continue']} for a stopped apply, or git -C {name} am --abort",
            "a git merge": f"git -C {name} merge --abort",
            "a git bisect": f"git -C {name} bisect reset",
        }.get(busy, f"git -C {name} {KEEP_MESSAGES} {busy.split()[-1]} --continue, or --abort")
        if busy == "a git rebase" and getattr(state or read_state(tree), "rebase_onto", None):
            how = "te-series rebase --continue, or --abort"  # the record's rebase (v12 #1)
        raise SeriesError(
            f"{name}/ has {busy} in progress. Finish or abort it ({how}), then export again."
        )
    state = state or read_state(tree)
    state = state and settle(tree, state)
    if state is None:
        raise SeriesError(no_record(tree, root))
    verbs = WorkTree.at(tree).verbs(state)
    why = unfinished_port(tree, root, state)  # before the branch: it is the port's (v34 #2)
    if why:
        raise SeriesError(why)
    off = off_the_series_branch(tree, root)
    if off:
        raise SeriesError(f"{off}, then export again.")
    if state.kind == "pypi":
        raise SeriesError(
            f"{name}/ was built from a PyPI base, which lacks tests/ and docs/, so exporting it "
            "would drop those hunks. Rebuild it from a git base: te-series apply --force "
            "--te-src PATH"
        )
    if not state.complete:
        rest = state.patches[state.applied :]
        how = (
            f"fix the stopped patch {state.failed}, then {verbs['continue']}"
            if state.failed
            else f"{verbs['continue']}"
        )
        raise SeriesError(
            f"{name}/ holds only {state.applied} of the {len(state.patches)} patches: apply "
            f"stopped{' on ' + state.failed if state.failed else ' (interrupted)'}. An export "
            f"now would drop {', '.join(rest)}.\nApply the rest first: {how}."
        )
    if state.rebase_onto:
        raise SeriesError(
            f"a te-series rebase onto {state.rebase_onto[:12]} is not finished in {name}/: "
            "te-series rebase --continue (or --abort)."
        )
    dirty = git("status", "--porcelain", "--untracked-files=no", "--ignore-submodules", cwd=tree)
    if dirty.strip():
        raise SeriesError(
            f"{name}/ has uncommitted edits; commit them (git -C {name} commit -a) or stash "
            f"them (git -C {name} stash), then export again:\n{dirty.rstrip()}"
        )
    loose = untracked(tree)
    if loose:
        exclude = rel(git_path(tree, "info/exclude"), root)
        raise SeriesError(
            f"{name}/ has untracked files, which export would not write (they are in no "
            f"commit): {', '.join(loose)}.\nCommit them (git -C {name} add ... && git -C {name} "
            f"commit), delete them, or list them in {exclude}; then export again."
        )
    return state


def back(name: str) -> str:
    """How to put the series branch back where it was, saying which commits that leaves."""
    return (
        f"git -C {name} reflog {SERIES_BRANCH} shows where it was; git -C {name} reset --keep "
        f"{SERIES_BRANCH}@{{N}} puts it back, and leaves exactly the commits git -C {name} log "
        f"{SERIES_BRANCH}@{{N}}..HEAD lists (cherry-pick yours of them back on top)"
    )


def changes_of_its_own(tree: Path, merge: str) -> bool:
    """Whether a merge commit's tree is not what git merges of its parents by itself (a
    conflict resolved, an edit made while merging): what a rebase drops. An old git without
    `merge-tree --write-tree`, or more than two parents: taken as yes."""
    parents = git("rev-parse", f"{merge}^@", cwd=tree).split()
    auto = git_run("merge-tree", "--write-tree", *parents, cwd=tree)
    if len(parents) != 2 or auto.returncode:
        return True
    return auto.stdout.split()[0] != object_id(tree, f"{merge}^{{tree}}")


def own_commits(tree: Path, root: Path, state: State) -> tuple[list[str], dict[str, list[str]]]:
    """The series' commits, base..HEAD, and their noted patch names; refuse history that
    export would get wrong."""
    name = rel(tree, root)
    base = state.base
    if not is_ancestor(tree, base, "HEAD"):
        if state.kind == "port":
            raise SeriesError(
                f"{name}/ HEAD does not descend from the ported series ({base[:12]}): a commit "
                "of the ported series itself was changed (amend, rebase). Port patches go on "
                f"top of it: undo that ({back(name)}) and commit your change on top. To change the "
                "series itself, edit fork/ and run te-series export."
            )
        below = ""
        if prerequisite_top(state.upstream or base, state.prerequisites) != (
            state.upstream or base
        ):
            below = (
                " (the top of the upstream prerequisites below the series: a prerequisite "
                "commit was changed or moved, e.g. by git rebase -i; they stay below the "
                "series as te-series made them)"
            )
        raise SeriesError(
            f"{name}/ HEAD does not descend from the series' base {base[:12]}{below}, so "
            f"base..HEAD is not the series. Undo that: {back(name)}. To move the series to "
            "another upstream commit, then use te-series rebase --onto COMMIT."
        )
    merges = git("rev-list", "--merges", f"{base}..HEAD", cwd=tree).split()
    if merges:
        # A merge of upstream (a git pull) goes with its upstream side: a rebase would replay
        # that side as commits of the series (v14 #1).
        m = next(iter(merged_from_outside(tree, base, "--first-parent", "HEAD")), "")[:12]
        undo = ("reset --keep HEAD^1" if m and object_id(tree, "HEAD").startswith(m) else
                f"rebase --onto {m}^1 {m} (it replays only the commits above it)")  # fmt: skip
        how = (
            f"Take out the newest merge of upstream's commits, {m}, with its upstream side: "
            f"git -C {name} {undo}; then export again. To move the series to upstream: "
            "te-series rebase --onto COMMIT."
            if m
            else f"Rebase them away (git -C {name} rebase {base[:12]}), then export again."
        )
        if not m and [r for r in merges if changes_of_its_own(tree, r)]:  # v33 #1
            head = object_id(tree, "HEAD")[:12]
            how = (
                f"A merge commit there holds a change of its own (a conflict resolution, an "
                f"edit made while merging), which a rebase drops. Rebase them away (git -C "
                f"{name} rebase {base[:12]}), take that change back as a commit (git -C {name} "
                f"diff --binary HEAD {head} | git -C {name} apply --index && git -C {name} "
                f"commit -m 'Keep the changes of merging'), then export again."
            )

        raise SeriesError(
            f"{name}/ has merge commit(s) after the base ({', '.join(m[:12] for m in merges)}); "
            f"format-patch would leave them out. {how}"
        )
    revs = commits(tree, f"{base}..HEAD")
    # A commit without a diff has no patch: git am could not read one back.
    log = git("log", "--format=%x00%h %s", "--name-only", "--no-renames", f"{base}..HEAD", cwd=tree)
    empty = [c.strip() for c in log.split("\0")[1:] if "\n" not in c.strip()]
    if empty:  # --amend reaches HEAD only (v37 #4)
        give = f"git -C {name} commit --amend" if [e[:7] for e in empty] == [revs[-1][:7]] else (
            f"git -C {name} rebase -i {base[:12]}, 'edit' it; then git -C {name} add the change, "
            f"git -C {name} commit --amend and git -C {name} rebase --continue")  # fmt: skip
        raise SeriesError(
            f"{name}/ has commit(s) that change no file: {'; '.join(empty)}. A patch needs a "
            f"diff. Drop each (git -C {name} rebase -i {base[:12]}, 'drop') or give it a change "
            f"({give}), then export again."
        )
    noted = {r: note_names(tree, r) for r in revs}
    # A copy of a prerequisite (upstream's change, made by te-series with upstream's
    # identity) is upstream's too, wherever it stands.
    authors = dict(
        line.split(" ", 1)
        for line in git("log", "--format=%H %ae", f"{base}..HEAD", cwd=tree).splitlines()
    )
    prerequisite = {r for r in revs if authors.get(r) == UPSTREAM["GIT_AUTHOR_EMAIL"]}
    # Upstream's commits, from base.toml's base and fork/'s own history, never from refs
    # (origin may have moved, v11 #3; a push of yours to it, or a tag, makes no commit
    # upstream's, v13 #2): those below the first commit that came from a patch, where a
    # hand rebase puts them.
    below = []
    if any(noted.values()):
        for r in revs:
            if noted[r]:
                break
            below.append(r)
    pulled = pulled_in(tree, base, [r for r in revs if not noted[r] and r not in below])
    upstream = [r for r in revs if r in below or r in prerequisite or r in pulled]
    if upstream:
        said = []
        for r in upstream:
            where = (
                "an upstream prerequisite, which te-series keeps below the series"
                if r in prerequisite
                else (
                    "below the first series patch"
                    if r in below
                    else "upstream's change, which a merge (git pull) brought into fork/"
                )
            )
            said.append(f"{log1(tree, '%h %s', r)} ({where})")
        top = upstream[-1]
        if upstream == revs[: len(upstream)]:  # all below the series: take them out at once
            refs = git("for-each-ref", "--contains", top, "--format=%(refname:short)",
                       "refs/heads", "refs/remotes", "refs/tags", cwd=tree).split()  # fmt: skip
            refs = [r for r in refs if r != SERIES_BRANCH and not r.endswith("/HEAD")]  # v21 #5
            undo = (
                f"git -C {name} rebase --onto {base[:12]} {top[:12]} {SERIES_BRANCH} (it takes "
                f"exactly the commit(s) named out of {SERIES_BRANCH}, and keeps every other "
                "commit; "
                + (f"they stay on {refs[0]})" if refs else "they are on no other branch or tag)")
            )
        else:
            undo = (
                f"git -C {name} rebase -i {base[:12]} and delete the lines of exactly the "
                "commit(s) named"
            )
        raise SeriesError(
            f"{name}/ has {len(upstream)} upstream commit(s) between the series' base "
            f"{base[:12]} and HEAD: {'; '.join(said)}. It was rebased by hand, and export "
            f"would write them as patches. Take them out: {undo}; then move the series with "
            "te-series rebase --onto COMMIT."
            + (" A new patch of yours below the first series patch, not upstream's: say so ("
               + " && ".join(f"git -C {name} notes --ref=te-series add -m new {r[:12]}"
                             for r in upstream if r in below)
               + "), then export again: it is written as a new patch." if below else "")
        )  # fmt: skip
    return revs, noted


def stripspace(text: str, cwd: Path) -> str:
    """What git am does to a message: `git stripspace` (comments kept), no final newline."""
    return git("stripspace", cwd=cwd, input=text).rstrip("\n")


IN_BODY_HEADER = re.compile(r"^(From|Subject|Date):")


def message_line(message: str, text: str) -> int:
    """The number of the first line of a commit message below its subject that reads `text`."""
    lines = [l.rstrip() for l in message.split("\n")]  # `text` may be stripspace's (v9 #8)
    start = lines.index("") if "" in lines else 1
    return next(
        (i + 1 for i, l in enumerate(lines) if i >= start and l == text.rstrip()), start + 1
    )


def why_cut(line: str) -> str:
    if line.startswith("---"):
        return "a line starting with '---' is where git am starts reading the diff"
    if line.startswith("diff -") or line.startswith("Index: "):
        return "git am reads a line starting with 'diff -' or 'Index: ' as the start of a diff"
    if IN_BODY_HEADER.match(line):
        return (
            "git am reads 'From:', 'Subject:' or 'Date:' at the top of the body as a header "
            "(indented too)"
        )
    return "git am reads it differently"


def how_to_keep(line: str) -> str:
    """The advice for a message line git am would read differently."""
    if IN_BODY_HEADER.match(line.lstrip()):
        return "Put another line of text above it (am reads headers only at the top)"
    return "Indent that line or write it another way"


def check_roundtrip(tree: Path, root: Path, base: str, revs: list[str], files: list[Path]):
    """Refuse commits whose message or author `git am` would not read back from their patch."""
    name = rel(tree, root)
    log = git("show", "-s", "--format=%H%x00%an <%ae>%x00%B%x00", *revs, cwd=tree).split("\0")
    problems = []
    for k, (rev, path) in enumerate(zip(revs, files)):
        author, message = log[3 * k + 1], log[3 * k + 2]
        want = stripspace(message, tree)
        subject = want.split("\n")[0]
        try:
            headers, body, _ = mailinfo(path.read_bytes(), tree, path.name)
        except SplitMail as e:
            problems.append(
                f"commit {rev[:12]} ({subject!r}): message line {message_line(message, e.line)}"
                f", {e.line!r}: git am "
                "reads it as the first line of another mail (git mailsplit), so the patch "
                "would bring back a message that ends above it (and make a commit of the "
                "rest). Indent that line or write it another way"
            )
            continue
        got = stripspace(headers.get("Subject", "") + "\n\n" + body, tree)
        if got != want:
            w, g = want.split("\n"), got.split("\n")
            i = next((i for i, (a, b) in enumerate(zip(w, g)) if a != b), min(len(w), len(g)))
            if i <= 2 and len(w) > 2 and IN_BODY_HEADER.match(w[2]):
                i = 2  # am took the body's first line for a header: `Subject:` changes line 1
            line = w[i] if i < len(w) else ""
            at = message_line(message, line) if i else 1
            if i == 0:  # tool-review-v8 #6, #15
                problems.append(
                    f"commit {rev[:12]}: its subject {line!r} would come back from the patch as "
                    f"{g[0]!r} (git am joins the lines of a first paragraph and drops what mail "
                    "takes for prefixes: '[PATCH]', 'Re:', a ':' after a bracket, repeated "
                    "blanks; v10 #4). Reword it to one line as am reads it"
                )
            else:
                problems.append(
                    f"commit {rev[:12]} ({subject!r}): message line {at}, {line!r}: "
                    f"{why_cut(line)}, so the patch would bring back "
                    + (f"{g[i]!r} there" if i < len(g) else "a message that ends above it")
                    + f" (and lose what follows). {how_to_keep(line)}"
                )
        elif message not in (want, want + "\n"):  # am strips it: the next export differs
            raw, clean = message.split("\n"), want.split("\n")
            at = next((i + 1 for i, (a, b) in enumerate(zip(raw, clean)) if a != b), len(clean) + 1)
            problems.append(
                f"commit {rev[:12]} ({subject!r}): message line {at} ends in whitespace or is "
                "one blank line too many, which git am drops, so the next export would write "
                "another patch (tool-review-v9 #5). Reword it (saving the message drops them)"
            )
        problems += [f"commit {rev[:12]} ({path.name}): message line {n}, {line!r}, {COMMENT_LINE}"
                     for n, line in comment_lines(message)]  # fmt: skip
        have = f"{headers.get('Author', '')} <{headers.get('Email', '')}>"
        if have != author.strip() and got == want:  # a body's `From:` line: above (v17 F3)
            # am's reading is offered as the author only where it drops characters of the
            # name (quotes, a blank), never where it reads another one (v17 F3)
            was, _, email = author.strip().rpartition(" <")
            chars = iter(was)
            ok = headers.get("Author") and all(c in chars for c in headers["Author"])
            ok = ok and have.endswith(f" <{email}")
            problems.append(
                f"commit {rev[:12]} ({subject!r}): its author {author.strip()!r} would come "
                f"back from the patch as {have!r}. Mark the commit 'edit', then git -C {name} "
                f"commit --amend --no-edit --author="
                + (shlex.quote(have) if ok else "'NAME <EMAIL>' (the author's own, its name "
                   "without quotes)")  # fmt: skip
                + f" and git -C {name} rebase --continue"
            )
    if problems:
        raise SeriesError(
            "export would write patches that git am (or git's message cleanup) reads back "
            "differently:\n  "
            + "\n  ".join(problems)
            + f"\nFix each commit named in git -C {name} {KEEP_MESSAGES} rebase -i {base[:12]} "
            "('reword' a message, 'edit' an author, as said), then export again."
        )


# The mail headers git format-patch writes: the rest of a patch's header is hand-written text
# that git am does not carry.
HEADER = re.compile(rb"[!-9;-~]+:")
MADE = re.compile(
    rb"From |(From|Date|Subject|MIME-Version|Content-Type|Content-Transfer-Encoding):"
)


def split_patch(patch: bytes) -> tuple[bytes, list[bytes], bytes, bytes, bytes]:
    """A patch file's mail headers, those of them format-patch does not write, its message
    up to '---', the text from there to the diff (the diffstat, and notes), and the diff."""
    head, _, rest = patch.partition(b"\n\n")
    extra = [h for h in re.split(rb"\n(?=\S)", head) if HEADER.match(h) and not MADE.match(h)]
    cut = m.end() if (m := re.search(rb"(?:\A|\n)---\n", rest)) else len(rest)  # a subject
    message, rest = rest[:cut], rest[cut:]  # alone: '---' right after the headers
    at = m.start() if (m := re.search(rb"^diff --git ", rest, re.M)) else len(rest)
    return head, extra, message, rest[:at], rest[at:]


def diffstat(diff: bytes) -> bytes | None:
    """What format-patch writes between '---' and a diff (its --stat and --summary, and the
    blank line after them), exactly: format-patch's own, of a commit made in a scratch
    repository with the diff's files, modes and line counts, which are all a diffstat shows.
    None for a diff no such commit stands for (binary, a rename)."""
    heads = [p.split(b"\n@@ ")[0] for p in re.split(rb"^diff --git ", diff, flags=re.M)[1:]]
    with tempfile.TemporaryDirectory(prefix="te-series-stat-") as tmp:
        counts = git_run("apply", "--numstat", "-z", cwd=tmp, input=diff, text=False)
        rows = [r.split(b"\t", 2) for r in counts.stdout.split(b"\0")[:-1]]
        if counts.returncode or not rows or len(rows) != len(heads) or any(
            r[0] == b"-" or re.search(rb"^(rename|copy) from", h, re.M) for r, h in zip(rows, heads)
        ):  # fmt: skip
            return None
        trees = [b"", b""]  # fast-import lines of the commit before the diff, and after it
        for (add, rem, path), head in zip(rows, heads):
            modes = dict(re.findall(rb"^(new file|deleted file|old|new) mode (\d+)$", head, re.M))
            same = m[1] if (m := re.search(rb"^index \S+ (\d+)$", head, re.M)) else None
            was = modes.get(b"old", modes.get(b"deleted file", same))  # None: a new file
            now = modes.get(b"new", modes.get(b"new file", same))  # None: a deleted file
            name = b'"%s"' % re.sub(rb'(["\\\\])', rb"\\\1", path).replace(b"\n", b"\\n")
            for k, (mode, sign, n) in enumerate(((was, b"-", rem), (now, b"+", add))):
                data = b"".join(b"%s%d\n" % (sign, i) for i in range(int(n)))
                trees[k] += (b"M %s inline %s\ndata %d\n%s\n" % (mode, name, len(data), data)
                             if mode else b"D %s\n" % name * k)  # fmt: skip
        commit = b"commit refs/heads/%s\ncommitter t <t> 0 +0000\ndata 5\nx\n\ny\n"
        stream = commit % b"a" + trees[0] + commit % b"b" + b"from refs/heads/a\n" + trees[1]
        repo = Path(tmp) / "repo"
        git("init", "-q", str(repo), cwd=tmp)
        if git_run("fast-import", "--quiet", cwd=repo, input=stream).returncode:
            return None
        (made,) = format_patch(repo, "a..b", Path(tmp) / "out")
        return split_patch(made.read_bytes())[3]


def keep_hand_written(old: bytes, new: bytes) -> tuple[bytes, dict[bytes, bytes]]:
    """`new`, format-patch's file of a commit, with what `old`, the file it was made from,
    holds that git am left out of the commit (notes below '---', extra mail headers): export
    keeps it byte for byte (v20 #1): between '---' and the diff, all but old's own diffstat
    (diffstat: what format-patch writes for old's diff; a pattern dropped notes, v21 #1).
    Also returned: the text after the hunks of each file that `new` no longer changes, by
    its `diff --git` line, for plan to place (place_trail)."""
    if not old.startswith(b"From "):  # not a mail git format-patch wrote
        return new, {}
    _, extra, _, region, diff = split_patch(old)
    head, had, message, made, rest = split_patch(new)
    extra = [h for h in extra if h not in had]
    olds, news = file_sections(diff), file_sections(rest)
    diff = b"".join(key + body for key, body, _ in olds)  # old's, without text of yours
    if region != made:
        stat = made if diff == b"".join(key + body for key, body, _ in news) else diffstat(diff)
        at = (b"\n" + region).rfind(b"\n" + stat[:-1]) if stat and stat[:-1] else -1
        made = (
            region[:at] + made[:-1] + region[at + len(stat) - 1 :] if at >= 0 else region + made
        )  # no diffstat of old's there: all of its text there is yours
    # the text after each file's hunks (a note, a `-- ` signature), which git am leaves out,
    # goes with its file, also where the file's diff changed (v22 R5, v23 #1, #2)
    trails = {key: trail for key, _, trail in olds}
    kept = [[key, body, trails.pop(key, trail)] for key, body, trail in news]
    rest = join_sections(kept) or rest
    out = head + b"".join(b"\n" + h for h in extra) + b"\n\n" + message + made + rest
    return out, {key: trail for key, trail in trails.items() if trail}


def place_trail(patch: bytes, key: bytes, trail: bytes) -> bytes:
    """`patch` with `trail` after the hunks of the file whose `diff --git` line is `key`, or
    at its end where it changes no such file."""
    diff = split_patch(patch)[4]
    parts = [list(part) for part in file_sections(diff)]
    if not parts:
        return patch + trail
    at = next((part for part in parts if part[0] == key), parts[-1])
    at[2] += (b"\n" if at[2] and not at[2].endswith(b"\n") else b"") + trail
    return patch[: len(patch) - len(diff)] + join_sections(parts)


def file_sections(diff: bytes) -> list[tuple[bytes, bytes, bytes]]:
    """A diff's files: each one's `diff --git` line, the rest of its diff, and the text after
    its last hunk that git apply skips (a note, a signature)."""
    out = []
    for part in re.split(rb"^(?=diff --git )", diff, flags=re.M)[1:]:
        nl = part.find(b"\n") + 1 or len(part)
        body, left, at = part[nl:], None, 0  # left: the hunk's old and new lines to come
        lines = body.split(b"\n")
        for line in lines[:-1] if lines[-1] == b"" else lines:  # a last one without b"\n" too
            if left and left != [0, 0]:
                if not line.startswith(b"\\"):  # "\ No newline at end of file" counts none
                    left = [left[0] - (line[:1] != b"+"), left[1] - (line[:1] != b"-")]
            elif m := re.match(rb"@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@", line):
                left = [int(m[1] or 1), int(m[2] or 1)]
            elif left is not None and not line.startswith(b"\\"):
                break  # after a hunk, no line of the diff
            at += len(line) + 1
        else:
            at = len(body)
        out.append((part[:nl], body[:at], body[at:]))
    return out


def join_sections(parts) -> bytes:
    """A diff from file_sections' parts; text of yours moved to a file that is not the last
    gets the line break it may lack there (v40 C2)."""
    joined = [b"".join(part) for part in parts]
    return b"".join(j if j.endswith(b"\n") or i == len(joined) - 1 else j + b"\n"
                    for i, j in enumerate(joined))  # fmt: skip


def refuse_conflict_markers(tree: Path, root: Path, data: dict[str, bytes], revs) -> None:
    """Refuse commits that add git's conflict markers (a `git add -A` of an unresolved
    conflict): a file of the series that gets both a `<<<<<<< ` and a `>>>>>>> ` line. data:
    the patch files of revs, in order."""
    found, first = [], None
    for name, blob, rev in zip(data, data.values(), revs):
        path, marks = None, {}
        for n, line in enumerate(blob.split(b"\n"), 1):
            if line.startswith(b"diff --git "):
                path = line.decode("utf-8", "replace").rsplit(" b/", 1)[-1]
            elif line.startswith((b"+<<<<<<< ", b"+>>>>>>> ")) and path:
                marks.setdefault(path, {}).setdefault(line[:2], n)
        found += [f"{name}: {f} (line {m[b'+<']} of the patch)" for f, m in marks.items()
                  if len(m) == 2]  # fmt: skip
        first = rev if found and first is None else first
    if found:
        name = rel(tree, root)
        how = f"amend that commit (git -C {name} commit --amend)"
        if first != revs[-1]:  # not HEAD: an amend would put the fix into another commit
            how = (
                f"edit the first commit that adds them (git -C {name} rebase -i {first[:12]}^, "
                f"with 'edit' on {first[:12]}'s line), remove them there, git -C {name} add "
                f"the files and git -C {name} commit --amend --no-edit, then git -C {name} "
                f"{KEEP_MESSAGES} rebase --continue (it may stop at the next such commit)"
            )
        raise SeriesError(
            "export would write conflict markers (<<<<<<< and >>>>>>> lines) into the "
            f"series: {'; '.join(found)}. Resolve them in {name}/: {how}; then export again."
        )


@dataclasses.dataclass
class Plan:
    """What an export would write."""

    tree: Path
    series: Series
    state: State
    revs: list[str]
    noted: list[list[str]]  # the patch names noted on each commit now
    owner: list[str | None]  # the listed patch each commit stands for
    names: list[str]  # new patch names, one per commit
    data: dict[str, bytes]
    series_text: str
    changed: list[str]
    added: list[str]
    removed: list[str]  # files to delete: dropped patches and old names of renamed ones
    unchanged: list[str]
    dropped: list[str]  # listed patches no commit stands for any more (--drop)
    renames: dict[str, bool]  # new name of a renamed patch: whether its content changed
    moved: list[tuple[str, str, str]]  # text of yours after the hunks of a file a commit no
    # longer changes: its patch, the file's name, the patch it goes to
    refusals: list[str] = dataclasses.field(default_factory=list)

    @property
    def series_changed(self) -> bool:
        f = self.series.series_file
        return f.read_text() != self.series_text if f.exists() else bool(self.series_text)


def refuse_changed_pins(tree: Path, root: Path, series: Series, state: State) -> None:
    """Refuse a fork/ whose prerequisite commits are not what base.toml's tables now pin (a
    colleague changed a table's subject or post-image): its patches would be written against
    another base than base.toml's."""
    for p in series.prerequisites:
        rev = (state.prerequisites or {}).get(str(p.pr))
        if not rev:
            continue  # the upstream commit has it: the pins do not make this base
        have = {path: object_id(tree, f"{rev}:{path}") for path in p.files}
        odd = [f"{path} is blob {have[path] or '(none)'}, the table pins {post}"
               for path, (_, post) in p.files.items() if have[path] != post]  # fmt: skip
        subject = log1(tree, "%s", rev)
        if subject != p.subject:
            odd.append(f"its subject is {subject!r}, the table's {p.subject!r}")
        if odd:
            raise SeriesError(
                f"{rel(tree, root)}/ was made with another upstream prerequisite #{p.pr} than "
                f"{rel(series.base_file, root)} now pins (its commit {rev[:12]}: "
                f"{'; '.join(odd)}): the series would be exported against another base than "
                "base.toml's. Rebuild fork/ (te-series apply --force --te-src PATH, which keeps "
                "the old fork/ whole in a backup) and make your change there again, or restore "
                "the table (git log -p -- patches/base.toml)."
            )


def plan(
    tree: Path,
    root: Path,
    series: Series,
    drops: list[str],
    state: State | None = None,
    base_commit: str | None = None,
    dry: bool = False,
) -> Plan:
    """Check everything and compute the export; write nothing.

    With `dry`, refusals about the files in patches/ (uncommitted edits, changes since
    apply) are kept in the plan for the report instead of raised.
    """
    state = state or check_tree(tree, root)
    verbs = WorkTree.at(tree).verbs(state)
    if state.kind == "git":
        base_commit = base_commit or series.base_commit
        upstream = state.upstream or state.base
        if object_id(tree, f"{base_commit}^{{commit}}") != upstream:
            raise SeriesError(
                f"{rel(tree, root)}/ was applied on {upstream[:12]}, but "
                f"{rel(series.base_file, root)} says {base_commit[:12]}. Rebuild fork/ "
                "(te-series apply --force --te-src PATH, which keeps the old fork/ whole in a "
                f"backup), or move it there: te-series rebase --onto {base_commit[:12]} "
                "--te-src PATH."
            )
        prerequisites = [str(p.pr) for p in series.prerequisites]
        had = list(state.prerequisites or {})
        if sorted(prerequisites) == sorted(had):
            refuse_changed_pins(tree, root, series, state)
        else:
            listed = ", ".join(f"#{n}" for n in prerequisites) or "none"
            raise SeriesError(
                f"{rel(tree, root)}/ was applied with the upstream prerequisites "
                f"{', '.join(f'#{n}' for n in had) or 'none'}, but "
                f"{rel(series.base_file, root)} lists {listed}: the series would be exported "
                "against another base than base.toml's. Rebuild fork/ (te-series apply "
                "--force --te-src PATH, which keeps the old fork/ whole in a backup)."
            )
    revs, noted = own_commits(tree, root, state)
    entries = series.entries()
    listed = series.names()
    slot = {e.name: i for i, e in enumerate(entries) if e.name}
    owner = patch_owners([noted[r] for r in revs], listed)
    gone = set(state.patches) - set(listed)
    if fresh := [n for n in listed if n not in owner and n not in state.patches]:
        # A listed name new since the tree was made that a commit noted with a name listed no
        # more would be exported as: a colleague's export renamed the patch, and fork/ made the
        # same change (its subject; v28 #2). That commit stands for it.
        with tempfile.TemporaryDirectory() as tmp:
            would = [f.name for f in format_patch(tree, f"{state.base}..HEAD", Path(tmp))]
        for i, (o, r, n) in enumerate(zip(owner, revs, would)):
            owner[i] = n if o is None and n in fresh and gone & set(noted[r]) else o
    taken = {o: r for o, r in zip(owner, revs) if o}
    mentioned = {n for r in revs for n in noted[r]}
    bad = [d for d in drops if d not in listed]
    if bad:
        raise SeriesError(f"--drop {', '.join(bad)}: not in {series.label}")
    kept = [d for d in drops if d in taken]
    if kept:
        which = ", ".join(f"{d} (commit {taken[d][:12]})" for d in kept)
        raise SeriesError(
            f"--drop {', '.join(kept)}: {rel(tree, root)}/ still holds it as a commit of its own: "
            f"{which}. Remove that commit first (git -C {rel(tree, root)} rebase -i "
            f"{state.base[:12]}, 'drop'), or leave out --drop."
        )
    missing = [n for n in listed if n not in taken]  # a note of a name listed no more: a
    held = set(taken.values()) | {r for r in revs if gone & set(noted[r])}  # rename since
    refuse_unnoted(tree, root, series, missing, revs, noted, held, taken)
    lost = [n for n in listed if n not in taken and n not in drops]
    if [n for n in listed if n not in taken and n not in state.patches]:
        # listed since the tree was made or last exported (an export's rename undone in
        # patches/, v20 #12): not a patch the tree lost, a list that changed since
        stale = [series.label + " (its list of patches)"]
        raise SeriesError(changed_since(rel(tree, root), stale, verbs))
    if lost:
        squashed = [n for n in lost if n in mentioned]
        note = f" ({', '.join(squashed)}: squashed into another patch's commit)" if squashed else ""
        raise SeriesError(
            f"an export now would drop {', '.join(lost)} from {rel(series.dir, root)}/: "
            f"{rel(tree, root)}/ holds no commit of its own for it{note}. If that is what you "
            f"want (the patch was dropped, or its change now lives in other commits), say so: "
            f"{verbs['export']} {drop_args(lost)}. Otherwise rebuild the tree with "
            f"the whole series ({verbs['rebuild']} keeps the old tree whole in a backup)."
        )
    with tempfile.TemporaryDirectory() as tmp:
        files = format_patch(tree, f"{state.base}..HEAD", Path(tmp))
        check_roundtrip(tree, root, state.base, revs, files)
        data = {p.name: p.read_bytes() for p in files}
    moved = []  # text after the hunks of a file that a commit no longer changes
    for o, n in zip(owner, list(data)):  # the file each commit was made from
        if o is not None and (series.dir / o).is_file():
            data[n], left = keep_hand_written((series.dir / o).read_bytes(), data[n])
            moved += [(n, key, trail) for key, trail in left.items()]
    made = list(data)  # each commit's patch, in order
    new = lambda m: owner[made.index(m)] is None  # noqa: E731
    for i, (n, key, trail) in enumerate(moved):  # goes with that file into a new commit next
        # to it that changes it (one split off: v36 #2), not into another patch (v37 #1, v40
        # M1); else to the end of its own
        at = made.index(n)
        near = [*itertools.takewhile(new, made[at + 1 :]),
                *itertools.takewhile(new, reversed(made[:at]))]  # fmt: skip
        to = next((m for m in near if key in
                   {k for k, _, _ in file_sections(split_patch(data[m])[4])}), n)  # fmt: skip
        data[to] = place_trail(data[to], key, trail)
        path = key.decode("utf-8", "replace").strip()[len("diff --git a/") :]
        moved[i] = (n, path.split(" b/", 1)[0], to)  # one name (v40 M2)
    refuse_conflict_markers(tree, root, data, revs)
    binary = [f"{n}: {f.path}" for n, blob in data.items()
              for f in parse_diff(blob.decode("utf-8", "surrogateescape")) if f.binary]  # fmt: skip
    if binary:
        raise SeriesError(
            f"export would write binary diffs into the series ({'; '.join(binary)}): "
            f"{NO_BINARY}: git -C {rel(tree, root)} rebase -i {state.base[:12]}, 'edit' that "
            f"commit, then git -C {rel(tree, root)} rm FILE (copy it elsewhere first to keep "
            f"it), git -C {rel(tree, root)} commit --amend --no-edit and git -C "
            f"{rel(tree, root)} rebase --continue ('drop' the commit instead where the file is "
            "all it changes); then export again."
        )
    fixups = [
        line
        for line in git(
            "log", "--reverse", "--format=%h %s", f"{state.base}..HEAD", cwd=tree
        ).splitlines()  # fmt: skip
        if re.match(r"^\S+ (fixup|squash|amend)! ", line)
    ]
    if fixups:
        name = rel(tree, root)
        raise SeriesError(
            f"{name}/ has fixup commit(s) not squashed yet: {'; '.join(fixups)}; export would "
            f"write each as a patch of its own. Squash them: git -C {name} rebase -i "
            f"--autosquash {state.base[:12]}, then export again."
        )
    names = list(data)
    # A rename must not land on the file of another listed patch that stays (that of one you
    # --drop is given up: v38 #3). One whose commit is renamed too is free (v22 R4), if only
    # its number changes: two notes swapped by hand would swap the files' text of yours
    # (notes below '---', v34 #1).
    renamed = [(o, n, r) for o, n, r in zip(owner, names, revs) if o not in (None, n)]
    ids = patch_ids(tree, "--no-walk", *[r for _, _, r in renamed]) if renamed else {}
    # listed file -> patch-id of its diff, where a renamed commit's may match
    of_file = {f: file_patch_id(tree, series.dir / f) for f in slot
               if ids and (series.dir / f).is_file()}  # fmt: skip
    # the patch a renamed commit is by its change, where not the one its note names (v35 #1)
    is_ = {r: next((f for f, i in of_file.items() if i == ids.get(r) and f != o), None)
           for o, _, r in renamed if of_file.get(o) != ids.get(r)}  # fmt: skip
    clash = [(o, n, r) for o, n, r in renamed if n in owner and o.split("-", 1)[-1] != n.split(
        "-", 1)[-1] or is_.get(r)]  # fmt: skip
    if clash:
        name = rel(tree, root)
        swapped = [f"git -C {name} notes --ref=te-series add -f -m "
                   f"{shlex.quote(is_.get(r) or n)} {r[:12]}" for o, n, r in clash]  # fmt: skip
        raise SeriesError(
            "export would write "
            + "; ".join(
                f"the commit noted as {o} as {n}" + (", over another patch" * (n in slot))
                for o, n, r in clash
            )
            + f", and delete {', '.join(o for o, _, _ in clash)}. The patch-name notes in "
            f"{name}/ do not match its commits. Nothing was written. Where a commit is the "
            f"patch it would be exported as, note it so ({'; '.join(swapped)}) and export "
            f"again; else rebuild the tree ({verbs['rebuild']}; the old tree is kept whole in "
            "a backup)."
        )
    text = merge_series(entries, slot, owner, names)
    refuse_emptied_groups(tree, root, series, entries, text, owner, names, state.base)
    changed, added, unchanged = [], [], []
    for n, blob in data.items():
        old = series.dir / n
        if not old.exists():
            added.append(n)
        elif old.read_bytes() != blob:
            changed.append(n)
        else:
            unchanged.append(n)
    removed = [n for n in listed if n not in data]
    # Files an export died before deleting (after its series was written): old names it
    # noted next to the new (v23 #4), dropped patches the record still names (v27 #2)
    removed += [
        n for n in dict.fromkeys([*(n for r in revs for n in noted[r]), *state.patches])
        if n not in listed and n not in data and (series.dir / n).is_file()
        and not changed_since_made(state, series.dir / n)
    ]  # fmt: skip
    dropped = [n for n in listed if n not in taken]
    renames = {
        n: not (series.dir / o).is_file() or (series.dir / o).read_bytes() != data[n]
        for o, n in zip(owner, names)
        if o is not None and o != n
    }
    p = Plan(
        tree, series, state, revs, [noted[r] for r in revs], owner, names, data, text,
        changed, added, removed, unchanged, dropped, renames, moved,
    )  # fmt: skip
    p.refusals = changed_since_apply(root, p) + uncommitted(root, p)
    if p.refusals and not dry:
        raise SeriesError("\n".join(p.refusals))
    return p


def refuse_emptied_groups(tree, root, series, entries, text: str, owner, names, base) -> None:
    """An export must not leave a `# pr:` group that has patches without any (its commits
    moved in fork/, `owner`: say where; or gone), nor write a series file that check rejects
    (a PR on one taken out, v13 #5)."""
    groups, (after, problems) = series.groups(entries)[0], series.groups(series.entries(text))
    emptied = [
        g for g, names, _ in groups if names and not dict((a, n) for a, n, _ in after).get(g)
    ]
    mine = {g: [n for n in names if n in owner] for g, names, _ in groups}
    of = {n: slug for slug, names, _ in groups for n in names}
    moved = [g for g in emptied if mine[g]]  # their commits stand elsewhere in fork/ (v14 #2)
    if moved:
        g, at = moved[0], min(owner.index(n) for n in mine[moved[0]])
        end = max(owner.index(n) for n in mine[g])
        prev = next((o for o in reversed(owner[:at]) if o and o not in mine[g]), None)
        nxt = next((o for o in owner[end + 1 :] if o and o not in mine[g]), None)
        if prev and nxt and of.get(prev) == of.get(nxt) != g:  # inside a PR (v24 #3)
            raise SeriesError(
                f"export would leave PR group {g!r} of {series.label} without patches: its "
                f"commit(s) ({', '.join(mine[g])}) now stand inside PR {of[prev]!r}, between "
                f"{prev} and {nxt}, where no line of {series.label} can make them a PR of "
                f"their own. Nothing was written. Move them in {rel(tree, root)}/ (git -C "
                f"{rel(tree, root)} rebase -i {base[:12]}) back, or to where a PR starts or "
                "ends, and export again."
            )
        raise SeriesError(
            f"export would leave PR group {g!r} of {series.label} without patches, though its "
            f"commit(s) ({', '.join(mine[g])}) are in {rel(tree, root)}/ with their notes, only "
            "moved (export would list them under another PR). Nothing was written. Move its "
            "'# pr:' line, with its patches' lines, "
            + (f"right after the line {prev}" if prev else
               f"above the first '# pr:' line, on main ('# pr: {g} on main')")  # fmt: skip
            + f" in {series.label} (where its commits now stand), commit, and export again; or "
            f"move the commits back in {rel(tree, root)}/."
        )
    of_now = {n: slug for slug, names_, _ in after for n in names_}
    regrouped = [(o, of[o], of_now.get(n)) for o, n in zip(owner, names)
                 if o in of and of_now.get(n) not in (of[o], None)]  # fmt: skip
    if regrouped:  # a commit moved into another PR's run: the series would say so (v24 #3)
        o, was, now = regrouped[0]
        raise SeriesError(
            f"export would move {o} from PR {was!r} to PR {now!r} in {series.label}: in "
            f"{rel(tree, root)}/ a commit of another PR now stands among PR {was!r}'s. Nothing "
            f"was written. Move the commits back (git -C {rel(tree, root)} rebase -i "
            f"{base[:12]}), or to where a PR starts or ends; to regroup on purpose, move the "
            f"lines in {series.label} yourself, commit, and export again."
        )
    if emptied:
        raise SeriesError(
            f"export would leave PR group(s) {', '.join(repr(g) for g in emptied)} of "
            f"{series.label} without patches (their commits would be listed under another "
            "group, or dropped). Nothing was written. If a commit lost its patch-name note "
            "(a rebase -x, an amend with notes.rewrite.amend=false), give it back: git -C "
            f"{rel(tree, root)} notes --ref=te-series add -f -m PATCH-NAME COMMIT. If you "
            f"mean to empty the group, {series.unstack(groups, set(emptied))}, commit, and export "
            "again."
        )
    if problems:
        raise SeriesError(
            f"export would write a {series.label} that check rejects:\n  " + "\n  ".join(problems)
            + f"\nNothing was written. Fix {series.label} as said, commit, and export again."
        )  # fmt: skip


def refuse_unnoted(tree, root, series, missing: list[str], revs, noted, held=(), taken=None):
    """A listed patch without a commit, and a commit without a patch-name note that has its
    subject: git lost the note (rebase -x, an amend with notes.rewrite.amend=false, a
    cherry-pick), or a note of another patch's name (copied by hand: v34 #3) stands for
    none (`held`: the commits that stand for a listed patch), or for one (`taken`: name ->
    commit) whose change it is not (copied onto an earlier commit: v35 #4). Say how to note
    it; --drop would re-add it as a new commit elsewhere."""
    unnoted = [r for r in revs if not noted[r] or held and r not in held]
    if not missing:
        return
    taken = taken or {}
    if not unnoted and not taken:
        return
    ids = patch_ids(tree, "--no-walk", *unnoted, *taken.values())
    unnoted += [r for n, r in taken.items() if (series.dir / n).is_file()
                and ids.get(r) != file_patch_id(tree, series.dir / n)]  # fmt: skip
    subject = dict(
        line.partition(" ")[::2]
        for line in git("log", "--no-walk", "--format=%H %s", *unnoted, cwd=tree).splitlines()
    )
    name = rel(tree, root)
    found = []
    for n in missing:
        want = read_patch(series.dir / n).subject
        match = [r for r in unnoted if subject.get(r) == want]
        if not match:  # reworded too: the same change (v24 #1)
            match = [r for r in unnoted if ids.get(r) == file_patch_id(tree, series.dir / n)]
        if len(match) == 1:
            found.append(
                f"commit {match[0][:12]} ({subject.get(match[0])!r}) is {n}: git -C {name} notes "
                f"--ref=te-series add -f -m {shlex.quote(n)} {match[0][:12]}"
            )
    if found:
        raise SeriesError(
            f"{name}/ has commit(s) without their te-series patch-name note (git rebase -x, "
            "an amend with notes.rewrite.amend=false or a cherry-pick loses it; or noted with "
            "another patch's name), so export "
            "would take them for new commits and their patches for dropped ones (--drop "
            "would re-add them under new names, maybe in another '# pr:' group). Note each "
            "with its patch's name, then export again:\n  " + "\n  ".join(found)
        )


def touched_files(p: Plan) -> dict[str, bytes | None]:
    """The files of the series folder export would write (new content) or delete (None)."""
    out: dict[str, bytes | None] = {n: p.data[n] for n in p.changed + p.added}
    out.update({n: None for n in p.removed})
    if p.series_changed:
        out[p.series.series_file.name] = p.series_text.encode()
    return out


def changed_since_apply(root: Path, p: Plan) -> list[str]:
    """Refuse to overwrite a patch file (or series) that changed since the tree was made
    from it, unless export would write exactly what is there now."""
    touched = touched_files(p)
    if not touched:
        return []
    name = rel(p.tree, root)
    verbs = WorkTree.at(p.tree).verbs(p.state)
    record = p.state.recorded
    if record is None:
        return [
            f"{name}/ was made by an earlier te-series, which did not record which versions "
            f"of the files in {rel(p.series.dir, root)}/ it was made from, so export cannot "
            f"tell your edits from later changes to them (a git pull). Rebuild it "
            f"({verbs['rebuild']}; the old tree is kept whole in a backup, fetch your "
            "commits back from there), then export again."
        ]
    stale, listed = [], p.series.names()
    # The series file is merged, not overwritten: comments and `# pr:` lines added since stay.
    # Its list of patches, though, is fork/'s: if that list changed since (lines reordered or
    # removed), export would undo that, unless fork/ made the same change (v11 #4): its
    # commits stand for the listed patches in their order (a drop of one that fork/ was made
    # with aside), and none for a patch taken out since.
    kept = [n for n in listed if n not in p.dropped or n not in p.state.patches]
    back = (set(p.state.patches) - set(listed)) & {
        n for o, names in zip(p.owner, p.noted) if o is None or o in names for n in names
    }  # a commit that stands for a renamed patch (plan, v28 #2) is not one taken out
    if p.series_changed and listed != p.state.patches and ([o for o in p.owner if o] != kept
                                                           or back):  # fmt: skip
        stale.append(p.series.label + " (its list of patches)")
    # The version each file was made from: under a name new since (a colleague's export
    # renamed or renumbered it), the recorded one of the name its commit is noted with (v29 #1)
    made = {n: next((record[o] for o in names if o in record), None)
            for n, names in zip(p.names, p.noted)}  # fmt: skip
    after = {o: n for o, n in zip(p.owner, p.names) if o and o != n}  # the name it moves to
    unlisted, tangled = [], []
    for n, new in touched.items():
        if n == p.series.series_file.name:
            continue
        path = p.series.dir / n
        now = file_id(path)
        if now and n not in record and n not in p.state.patches and n not in p.series.names():
            unlisted.append(rel(path, root))
        elif changed_since_made(p.state, path) and now != (blob_id(new) if new is not None else ""):
            was = record.get(n) or made.get(n)
            if new is None and n in after:  # renamed: its commit's new file must hold it (v30 #3)
                new = p.data[after[n]]
            undone = undoes(root, path, was, new) if new is not None or n in p.owner else "lost"
            if undone:
                stale.append(rel(path, root))
            if undone == "tangled":
                tangled.append(rel(path, root))
    said = []
    if unlisted:  # untracked ones: uncommitted() says what to do with them (v30 #4)
        out = git_run("ls-files", "-z", "--", *unlisted, cwd=root)
        unlisted = [f for f in unlisted if out.returncode or f in out.stdout.split("\0")]
    if unlisted:
        said.append(
            f"{', '.join(unlisted)} exist(s) but is in no series: export would write a "
            f"patch of {name}/ over it. Move it away (git mv, or git rm if it is not needed), "
            "commit that, and export again."
        )
    return said + [changed_since(name, stale, verbs, tangled)] if stale else said


def undoes(root: Path, path: Path, was: str | None, new: bytes | None) -> str:
    """What writing `new` over a patch file that changed since blob `was` (of this checkout)
    would undo of that change: "" for nothing, as it is only in what export keeps of the file
    anyway (keep_hand_written: text between '---' and the diff, extra mail headers, text
    after a file's hunks; v21 #4), or `new` has it too (fork/ made the same change, besides
    changes of its own: v28 #1; `was` None: a file new since, all of it the change).
    The second is a 3-way merge of the three versions' lines that git computes for a diff
    (diffstat, index lines, hunk line numbers) left out: clean, and `new` as it was. Where
    that merge conflicts ("tangled"), fork/'s own changes touch or border the lines of that
    change, so that making the same change in fork/ cannot show it (v29 #3); "lost" else."""

    def kept(patch: bytes) -> bytes:  # the file without what export keeps or git computes
        head, extra, message, _, diff = split_patch(patch)
        head = b"\n".join(h for h in re.split(rb"\n(?=\S)", head) if h not in extra)
        diff = b"".join(key + body for key, body, _ in file_sections(diff))  # v40 L1
        diff = re.sub(rb"^index .*\n", b"", diff, flags=re.M)
        return b"\n".join([head, message, re.sub(rb"^@@ [^@]* @@", b"@@", diff, flags=re.M)])

    old = git_run("cat-file", "blob", was, cwd=root, text=False) if was else None
    if not path.is_file() or old is not None and old.returncode:  # gone since (v35 #2)
        return "lost"
    # a file new since fork/ was made (a colleague's patch, v41 #1): its change is all of it
    base, now = kept(old.stdout) if old is not None else b"", kept(path.read_bytes())
    if new is None or base == now:
        return "" if base == now else "lost"
    with tempfile.TemporaryDirectory(prefix="te-series-merge-") as tmp:
        for name, data in (("new", kept(new)), ("base", base), ("now", now)):
            Path(tmp, name).write_bytes(data)
        merged = git_run("merge-file", "-p", "new", "base", "now", cwd=tmp, text=False)
    if merged.returncode:
        return "tangled"
    return "" if merged.stdout == kept(new) else "lost"


def changed_since(name: str, stale: list[str], verbs: dict, tangled: tuple = ()) -> str:
    """The refusal for files of the series folder that changed since the tree was made; for
    those `tangled` (undoes), the same change in the tree cannot get past it."""
    rebuild = (
        f"rebuild {name}/ from the files as they are now ({verbs['rebuild']}; the old tree is "
        "kept whole in a backup, fetch your commits back from there)"
    )
    if len(tangled) == len(stale):
        how = (
            f" {name}/'s own changes to it (not exported) touch the lines of that change or "
            f"the lines next to them, so export cannot tell whether {name}/ has that change too:"
            f" {rebuild}, then make those changes again in the new {name}/."
        )
    else:
        only = (
            f" (for {', '.join(tangled)} only the rebuild: {name}/'s own changes to it touch "
            "the lines of that change or the lines next to them)"
        )
        how = (
            f" Either {rebuild}, or make the same change in {name}/, so that export has "
            f"nothing to undo{only if tangled else ''}."
        )
    return (
        f"{', '.join(stale)} changed since {name}/ was made from it (a git pull, a colleague's "
        f"commit, an export undone, or an edit of yours): export would write {name}/'s version "
        f"over it and undo that change.{how} `git log -p -- FILE` shows the change."
    )


def uncommitted(root: Path, p: Plan) -> list[str]:
    """Refuse to overwrite or delete patch files whose edits are not committed."""
    d = p.series.dir
    touched = [d / n for n in touched_files(p) if (d / n).exists()]
    if not touched:
        return []
    probe = d if d.exists() else root
    inside = git_run("rev-parse", "--is-inside-work-tree", cwd=probe)
    if inside.stdout.strip() != "true":
        how = "Commit patches/ to git first."
        if d.is_symlink():  # committing the link keeps no patch file (v31 #1)
            real, link = d.resolve(), shlex.quote(str(rel(d, root)))
            how = (
                f"It is a link to {real}: put that folder in its place (rm {link} && mv "
                f"{shlex.quote(str(real))} {link}; commit what git status shows changed "
                "there), then export again."
            )
        return [
            f"{rel(d, root)}/ is not in a git repository, so the patch files export would "
            f"replace could not be got back. {how}"
        ]
    status = git(
        "status", "--porcelain", "--untracked-files=all", "--", *map(str, touched), cwd=probe
    )
    if not status.strip():
        return []
    name = rel(p.tree, root)
    # file by file (v40 L2): what fork/ was made from, or an export wrote, fork/ holds
    made = {f.name for f in touched if f.is_file() and not changed_since_made(p.state, f)}
    listed = lambda out: [rel(probe / n, root) for n in out.split("\0") if n]  # noqa: E731
    paths = [f.name for f in touched]  # probe is d: touched files exist
    loose = listed(git("ls-files", "--others", "-z", "--", *paths, cwd=probe))
    edited = listed(git("diff", "--name-only", "-z", "--relative", "HEAD", "--", *paths,
                        cwd=probe))  # fmt: skip
    held = [f for f in edited + loose if Path(f).name in made]
    edited, loose = [f for f in edited if f not in held], [f for f in loose if f not in held]
    quoted = " ".join(shlex.quote(f) for f in edited)
    how = ""
    if held:  # apply ran after the edits, or export wrote the file
        how += (
            f"{name}/ was made from {', '.join(held)} as they are (or export wrote them), so "
            f"it holds them: commit them first (git add {rel(d, root)} && git commit). "
        )
    if edited:  # committed, export tells them apart; no rebuild here (v38 #1, #2)
        how += (
            f"The edits of {', '.join(edited)} are not what {name}/ was made from (git "
            f"diff HEAD -- {quoted} shows them). To keep them, commit them (git add "
            f"{quoted} && git commit): export keeps text of yours that no commit holds "
            f"(notes, comments in the series), and says how to go on where an edit changes "
            f"what {name}/ would write; to throw them away: git checkout HEAD -- "
            f"{quoted}. "
        )
    if loose:
        how += (
            f"{', '.join(loose)}: in no commit (untracked) and not what {name}/ was made "
            f"from, so export would overwrite it: move it out of {rel(d, root)}/ (or delete "
            "it). "
        )
    how += "Then export again."
    return ["export would overwrite or delete files with uncommitted edits:\n" + status.rstrip()
            + "\n" + how]  # fmt: skip


def merge_series(entries, slot: dict[str, int], owner: list[str | None], names: list[str]) -> str:
    """The series file with each commit's new name on its patch's line.

    Comments, blank lines and `# pr:` markers stay where they are. A patch keeps its line
    (under its new name if its subject changed); commits that stand for no listed patch, or
    that moved, go right after the commit before them; lines of patches no commit holds go.
    """
    keyed = [(i, slot[o]) for i, o in enumerate(owner) if o is not None]
    # Longest run of commits whose lines are already in order: those stay put.
    best: list[list[int]] = []
    for k, (_, s) in enumerate(keyed):
        prev = [best[j] for j in range(k) if keyed[j][1] < s]
        best.append(max(prev, key=len, default=[]) + [k])
    stay = {keyed[k][0] for k in max(best, key=len, default=[])}
    at_line = {slot[owner[i]]: i for i in stay}
    items: list[tuple[str, object]] = []
    for idx, e in enumerate(entries):
        if e.name is None:
            items.append(("line", e.text))
        elif idx in at_line:
            items.append(("commit", at_line[idx]))
    for i in range(len(names)):
        if i in stay:
            continue
        if i == 0:
            pos = next((k for k, it in enumerate(items) if it[0] == "commit"), len(items))
        else:
            pos = items.index(("commit", i - 1)) + 1
        items.insert(pos, ("commit", i))
    return "".join((names[v] if k == "commit" else v) + "\n" for k, v in items)


def write(root: Path, p: Plan, extra: dict[Path, bytes] | None = None) -> None:
    """Write the plan (and `extra` files) as one group that Ctrl-C cannot split.

    Notes first get the new names next to the old ones, so whichever names patches/ holds
    if the machine dies halfway, every commit is still found; then the files; then the
    notes and the record settle on the new names.
    """
    files = {p.series.dir / n: p.data[n] for n in p.changed + p.added}
    if p.series_changed:
        text = p.series_text
        if p.series.series_file.is_file() and b"\r\n" in p.series.series_file.read_bytes():
            text = text.replace("\n", "\r\n")  # the file's own line ends stay
        files[p.series.series_file] = text.encode()
    files.update(extra or {})
    with no_interrupt():
        for rev, old, n in zip(p.revs, p.noted, p.names):
            if n not in old:
                set_note(p.tree, rev, "\n".join([*old, n]))
        if files:
            p.series.dir.mkdir(parents=True, exist_ok=True)
        write_all(root, files, [p.series.dir / n for n in p.removed])
        for rev, old, n in zip(p.revs, p.noted, p.names):
            if old != [n]:
                set_note(p.tree, rev, n)
        p.state.patches = list(p.names)
        p.state.applied = len(p.names)
        p.state.failed = None
        p.state.skipped = []
        p.state.recorded = {n: blob_id(p.data[n]) for n in p.names}
        record_file(p.state, p.series.series_file)  # as export left it (v37 #2)
        # what was written, kept in git's store too: the next export reads it back where the
        # file changed since (a note added below '---' before its commit: v36 #1)
        if files:
            git_run("hash-object", "-w", "--", *map(str, files), cwd=p.series.dir)
        write_state(p.tree, p.state)


def write_all(root: Path, files: dict[Path, bytes], removed: list[Path] = ()) -> None:
    """Write every file as a temporary one first, then rename them all into place and delete
    `removed`: a full disk or a read-only folder stops the export before any file is
    replaced, and the renames do not fail for want of space; a file that cannot be replaced
    or deleted (chattr +i) stops it too, the files done before it given their bytes back
    (v17 F1). Either way the temporary files go. A file that is a symbolic link is written
    through it, as an editor does: the link stays (it was replaced by a file, v19 F6)."""
    files = {(path.resolve() if path.is_symlink() else path): data for path, data in files.items()}
    tmps, done = {}, {}
    try:
        for path, data in files.items():
            tmps[path] = path.with_name(f".{path.name}.te-series-tmp")
            tmps[path].write_bytes(data)
        for path in [*files, *removed]:
            old = path.read_bytes() if path.exists() else None
            os.replace(tmps[path], path) if path in files else path.unlink(missing_ok=True)
            done[path] = old
    except OSError as e:
        for back, old in done.items():
            with contextlib.suppress(OSError):
                write_atomic(back, old) if old is not None else back.unlink()
        for tmp in tmps.values():
            tmp.unlink(missing_ok=True)
        raise SeriesError(
            f"could not write {rel(path, root)} ({e.strerror}); nothing was written, the "
            "series is as it was. Make room, or make the folder and that file writable (lsattr "
            "shows an immutable one: chattr -i), and export again."
        ) from None


def report(root: Path, p: Plan, dry: bool) -> None:
    would = "would " if dry else ""
    print(
        f"export{' --dry-run' if dry else ''}: {len(p.names)} patch(es) from "
        f"{rel(p.tree, root)}/ into {rel(p.series.dir, root)}/"
        + (" (nothing written)" if dry else "")
    )
    entries = p.series.entries(p.series_text)
    groups, marks = p.series.groups(entries)[0], [e.text.strip() for e in entries if e.pr]
    new = {n for o, n in zip(p.owner, p.names) if o is None}
    for o, n in zip(p.owner, p.names):
        g = next((k for k, (_, names, _) in enumerate(groups) if n in names), len(groups))
        if o is None and g + 1 < len(groups) and new >= set(groups[g][1][groups[g][1].index(n) :]):
            slug, nxt = groups[g][0], groups[g + 1][0]  # which PR: the commits cannot say (v12 #4)
            print(
                f"  {would}add {n} (a new commit) at the end of PR {slug!r}; if it belongs to "
                f"PR {nxt!r}, move its line below {marks[g + 1]!r} in {p.series.label}, commit"
            )
        elif o is None:
            print(f"  {would}add {n} (a new commit)")
        elif o != n:
            print(f"  {would}rename {o} -> {n}" + (" (changed)" if p.renames[n] else ""))
        elif n in p.changed:
            print(f"  {would}change {n}")
        else:
            print(f"  unchanged {n}")
    for n in p.dropped:
        taken = " (its file now holds the commit exported under that name)"
        print(f"  {would}drop {n}{taken}" if n in p.names else f"  {would}remove {n} (dropped)")
    for n in [n for n in p.removed if n not in p.dropped and n not in p.owner]:
        print(f"  {would}remove {n} (an earlier export, stopped, left it)")
    for n, path, to in p.moved:
        where = f"in {to}, after that file's hunks" if to != n else "at its end"
        print(f"  {would}keep the text of yours after the hunks of {path} in {n}, which "
              f"changes that file no more, {where}")  # fmt: skip
    if p.series_changed:
        print(f"  {would}rewrite {p.series.label}")
    if p.refusals:
        print("but export refuses to write now:" if dry else "refused:")
        for r in p.refusals:
            print("  " + r.replace("\n", "\n  "))


def target(root: Path, port: str | None) -> tuple[Path, Series]:
    series = load_series(root)
    return WorkTree(root, port).path, series if port is None else series.port_series(port)


def export(tree: Path, series: Series, drops: list[str] = (), root: Path | None = None) -> Plan:
    """Export tree into series (for callers and tests): plan, then write."""
    root = root or series.root
    p = plan(tree, root, series, list(drops))
    write(root, p)
    return p


def run(args) -> int:
    tree, series = target(args.root, args.port)
    p = plan(tree, args.root, series, args.drop or [], dry=args.dry_run)
    if not args.dry_run:
        write(args.root, p)
    report(args.root, p, args.dry_run)
    return 2 if p.refusals else 0
