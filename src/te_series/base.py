"""Where a series applies: one `Base` with a git and a wheel variant (the choice is made
once), the wheel cache, and the upstream prerequisites every base gets by one rule.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

from .util import cache_dir, progress, PYPI_PREFIX, rel, SERIES_BRANCH, SeriesError
from .git import blob_id, BOT, git, git_run, init_repo_config, object_id
from .series import base_preimages, Prerequisite, read_patch, Series


# Author and committer of an upstream prerequisite's commit in fork/: upstream's change, not
# the series' (nor the placeholder's), never signed off by te-series; stable dates so that
# the same base gives the same commit id (range-diff, a rebuilt fork/, a rebase).
UPSTREAM = {
    "GIT_AUTHOR_NAME": "TransformerEngine upstream",
    "GIT_AUTHOR_EMAIL": "upstream@te-series.invalid",
    "GIT_COMMITTER_NAME": "TransformerEngine upstream",
    "GIT_COMMITTER_EMAIL": "upstream@te-series.invalid",
    "GIT_AUTHOR_DATE": BOT["GIT_AUTHOR_DATE"],
    "GIT_COMMITTER_DATE": BOT["GIT_COMMITTER_DATE"],
}


def cached_wheel(req: str, pattern: str, hint: str = "") -> Path:
    """A wheel from the package index, downloaded once into the cache (one definition)."""
    dist = cache_dir() / "dist"
    dist.mkdir(exist_ok=True)
    found = sorted(dist.glob(pattern))
    if found and whole_zip(found[0]):
        return found[0]
    if found:  # a download cut short (v19 F2), a bad block (v20 #3, #4): ours to fetch again
        progress(f"{found[0]} is damaged (it fails its zip and checksum test): fetching it again")
        found[0].unlink()
    progress(f"downloading {req}")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(dist), req],
        capture_output=True,
        text=True,
        check=False,
    )
    found = sorted(dist.glob(pattern))
    if proc.returncode != 0 or not found:
        raise SeriesError(f"could not download {req}:\n{proc.stderr.strip()[-1500:]}\n{hint}")
    return found[0]


def whole_zip(path: Path) -> bool:
    """Whether a zip file reads whole: its directory, and each member's data and CRC."""
    try:
        with zipfile.ZipFile(path) as zf:
            return zf.testzip() is None
    except (zipfile.BadZipFile, zlib.error, EOFError):
        return False


def release_wheel(release: str, series: Series | None = None) -> Path:
    """The pure-Python `transformer_engine` wheel of a release."""
    hint = ""
    if series is not None:
        known = [f"{series.release} (base)"] + [f"{t} (port target)" for t in series.port_targets]
        known += [f"{p.release} (prerequisite #{p.pr})" for p in series.prerequisites]
        hint = f"Releases in {rel(series.base_file, series.root)}: {', '.join(known)}."
    return cached_wheel(
        f"transformer-engine=={release}",
        f"transformer_engine-{release}-py3-none-any.whl",
        hint,
    )


def extract_package(wheel: Path, dest: Path) -> None:
    """Unpack a wheel's transformer_engine/ into dest; refuse what is not such a wheel."""
    if not wheel.is_file():
        what = "is no file" if wheel.exists() else "does not exist"  # a folder, /dev/null
        raise SeriesError(f"wheel {wheel} {what}")
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [
                n for n in zf.namelist() if n.startswith(PYPI_PREFIX) and not n.endswith("/")
            ]
            if not members:
                raise SeriesError(
                    f"{wheel} has no {PYPI_PREFIX} package: pass the pure-Python "
                    "transformer_engine wheel (transformer_engine-<release>-py3-none-any.whl)"
                )
            for name in members:
                zf.extract(name, dest)
    except (zipfile.BadZipFile, zlib.error, EOFError) as e:
        raise SeriesError(f"{wheel} is not a wheel (not a whole zip file: {e})") from None


def init_git_base(dest: Path, te_src: Path, commit: str) -> str:
    """Clone te_src into dest and check out `commit` on the series branch; return its id."""
    progress(f"cloning {te_src} into {dest.name}/")
    if not (te_src / ".git").exists() and not (te_src / "HEAD").exists():
        raise SeriesError(f"--te-src {te_src} is not a git checkout of TE")
    dest.parent.mkdir(parents=True, exist_ok=True)
    git("clone", "-q", "--no-checkout", str(te_src), str(dest), cwd=dest.parent)
    full = object_id(dest, f"{commit}^{{commit}}")
    if not full and git_run("cat-file", "-e", "HEAD:transformer_engine", cwd=dest).returncode:
        raise SeriesError(  # a fetch there cannot help (v29 #5)
            f"--te-src {te_src} has no transformer_engine/ folder at its HEAD: it is no "
            "TransformerEngine checkout. Name one (git clone "
            "https://github.com/NVIDIA/TransformerEngine) and run again."
        )
    if not full:
        shallow = git("rev-parse", "--is-shallow-repository", cwd=te_src).strip() == "true"
        fetch = "--unshallow origin" if shallow else "origin main"  # a clone --depth (v12 #6)
        raise SeriesError(
            f"base commit {commit} is not in {te_src}. Fetch upstream main there "
            f"(git -C {te_src} fetch {fetch}) and run again."
        )
    git("checkout", "-q", "-B", SERIES_BRANCH, full, cwd=dest)
    init_repo_config(dest)
    return full


def init_pypi_base(dest: Path, wheel: Path, release: str) -> str:
    """Unpack the wheel's transformer_engine/ into a new repo and commit it as the base."""
    progress(f"unpacking {wheel.name} into {dest.name}/ as the base commit")
    dest.mkdir(parents=True)
    git("init", "-q", "-b", SERIES_BRANCH, cwd=dest)
    extract_package(wheel, dest)
    git("add", "-A", cwd=dest)
    git("commit", "-q", "-m", f"transformer_engine {release} from PyPI", cwd=dest)
    init_repo_config(dest)
    return object_id(dest, "HEAD")


def prerequisite_needs(repo: Path, rev: str, p: Prerequisite, where: str = "") -> list[str]:
    """The files of prerequisite p that rev lacks (their blob is `pre`); [] when rev contains
    it. The one rule for every base (git, wheel, ports, rebase's new commit):

    - a file at `pre` lacks it, a file at `post` has it;
    - a file at another blob has it when rev's history shows p: the file was at `post` in
      it, or a commit is titled p's subject (upstream's squash merge), as on an upstream
      main that moved the file on since it merged p;
    - anything else stops, naming the file and the three blob ids.
    """
    where = where or f"{repo.name}/ at {rev[:12]}"
    need = []
    for path, (pre, post) in p.files.items():
        have = object_id(repo, f"{rev}:{path}")
        if have == post:
            continue
        if have == pre:
            need.append(path)
            continue
        kind = git_run("cat-file", "-t", have, cwd=repo).stdout.strip() if have else ""
        if kind and kind != "blob":
            raise SeriesError(
                f"upstream prerequisite #{p.pr}: {path} is a {kind} in {where}, not a file;"
                f" its [prerequisite.files] entry in base.toml must name "
                "a file (fix the path)."
            )
        if _history_has(repo, rev, p, path):
            continue
        raise SeriesError(
            f"upstream prerequisite #{p.pr} ({p.subject!r}): {where} has "
            f"{path} at blob {have or '(no such file)'}, neither its pre-image {pre} (a base "
            f"without #{p.pr}, which te-series brings up to it from release {p.release}) nor "
            f"its post-image {post}; and its history holds neither that post-image nor a "
            f"commit titled {p.subject!r}, so nothing shows that it contains #{p.pr}: it "
            f"changed {path} some other way. Use a base with that file at one of the two ids "
            "(base.toml's [upstream] commit or [pypi] release), or an upstream commit that has "
            f"#{p.pr} merged (te-series rebase --onto COMMIT). If upstream merged #{p.pr} "
            "under another title, write that title as the table's subject in base.toml."
        )
    return need


def _history_has(repo: Path, rev: str, p: Prerequisite, path: str) -> bool:
    """Whether rev's history holds p: path at p's post-image blob, or a commit titled p's
    subject."""
    post = p.files[path][1]
    found = git_run("log", "-1", "--format=%H", f"--find-object={post}", rev, "--", path, cwd=repo)
    if found.returncode == 0 and found.stdout.strip():
        return True
    titled = git_run(
        "log", "--format=%s", "--fixed-strings", f"--grep={p.subject}", rev, cwd=repo
    ).stdout.splitlines()
    return p.subject in titled


def release_file(series: Series, p: Prerequisite, path: str) -> bytes:
    """A prerequisite's file from its release's transformer_engine wheel, checked: post."""
    wheel = release_wheel(p.release, series)
    try:
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read(path)
    except (KeyError, zipfile.BadZipFile):
        data = None
    post = p.files[path][1]
    if data is None or blob_id(data) != post:
        said = "lacks it" if data is None else f"has blob {blob_id(data)}"
        raise SeriesError(
            f"upstream prerequisite #{p.pr}: {path} of release {p.release} ({wheel}) {said}, "
            f"not the post-image {post} that base.toml's [[prerequisite]] pins. Most likely "
            f"the table's `release` is not a release that has #{p.pr} as pinned: set it to "
            "one whose file is the post-image (or fix the blob ids). Only if the wheel is a "
            "damaged download, delete it (it is fetched again). Then run again."
        )
    return data


def apply_prerequisites(repo: Path, series: Series, where: str = "") -> dict[str, str]:
    """Bring base.toml's upstream prerequisites into repo's checked-out HEAD (every base:
    git, PyPI, ports, range-diff's and check's clones). Returns PR number -> commit.
    `where` names repo in errors where its folder is no one's (rebase's scratch tree).

    A prerequisite whose files the tree has already (post-image) makes no commit ("").
    Otherwise its files that have the pre-image get the release's file, in one commit with
    its upstream subject, upstream's identity and no sign-off: upstream's change, which the
    series starts above.
    """
    done: dict[str, str] = {}
    for p in series.prerequisites:
        need = prerequisite_needs(repo, "HEAD", p, where)
        if not need:
            done[str(p.pr)] = ""
            continue
        progress(f"upstream prerequisite #{p.pr}: {', '.join(need)} from release {p.release}")
        for path in need:
            post = p.files[path][1]
            known = git_run("cat-file", "blob", post, cwd=repo, text=False)
            data = known.stdout if known.returncode == 0 else release_file(series, p, path)
            (repo / path).parent.mkdir(parents=True, exist_ok=True)  # an index-only tree
            (repo / path).write_bytes(data)
        git("add", "--", *need, cwd=repo)
        git("commit", "-q", "--no-verify", "--cleanup=verbatim", "-m", p.message, cwd=repo,
            env=UPSTREAM)  # fmt: skip
        done[str(p.pr)] = object_id(repo, "HEAD")
        committed = {path: git("rev-parse", f"HEAD:{path}", cwd=repo).strip() for path in need}
        changed = [path for path in need if committed[path] != p.files[path][1]]
        if changed:
            where = where or f"{repo.name}/"
            raise SeriesError(
                f"upstream prerequisite #{p.pr}: {', '.join(changed)} did not get the "
                f"post-image blob when committed in {where} (a git attribute of the "
                f"tree, e.g. ident or a filter, changed it: blob {committed[changed[0]]}). "
                "Nothing of the series was applied."
            )
    return done


def prerequisite_top(upstream: str, prerequisites: dict[str, str] | None) -> str:
    """Where the series starts: the last prerequisite commit, or the upstream commit."""
    return next((c for c in reversed(list((prerequisites or {}).values())) if c), upstream)


def preimage_mismatches(tree: Path, want: dict[str, str | None], rev: str = "HEAD") -> list[str]:
    """The files whose blob at rev is not the pre-image `want` gives (None: no such file),
    each with both ids: the one pre-image check (a wheel base, a port patch)."""
    out = []
    for path, old in want.items():
        have = object_id(tree, f"{rev}:{path}")
        if old is None and have:
            out.append(f"{path}: the series creates it, but the tree has {have}")
        elif old is not None and not have.startswith(old):
            out.append(f"{path}: made against blob {old}, the tree has {have or 'no such file'}")
    return out


def include_for(kind: str) -> str | None:
    """What of a patch `git am --include` applies on a base of this kind: all on git (and a
    port's own tree), transformer_engine/ on a wheel."""
    return PYPI_PREFIX + "*" if kind == "pypi" else None


class Base:
    """Where a series applies, the git-or-wheel choice made once: a TE checkout holding
    base.toml's commit (git), or a release's transformer_engine wheel (pypi: its package
    only, so hunks outside transformer_engine/ are left out and said to be)."""

    def __init__(self, series: Series, te_src: Path | None = None, wheel: Path | None = None,
                 release: str | None = None):  # fmt: skip
        self.series, self.te_src, self.wheel = series, te_src, wheel
        self.kind = "git" if te_src is not None else "pypi"
        self.release = None if te_src is not None else release or series.release
        self.include = include_for(self.kind)

    def init(self, dest: Path, commit: str | None = None) -> str:
        """Make dest a repository at the base, on branch series; return the commit."""
        if self.te_src is not None:
            return init_git_base(dest, self.te_src, commit or self.series.base_commit)
        wheel = self.wheel or release_wheel(self.release, self.series)
        return init_pypi_base(dest, wheel, self.release)

    def absent(self, *versions: Series) -> dict[str, list[str]]:
        """The files the series (or these versions of it) touch that this base lacks, with
        their patches: none on a git base; tests/, docs/ on a wheel."""
        out: dict[str, list[str]] = {}
        for s in versions or (self.series,):
            for path in [] if self.te_src is not None else s.paths():
                for f in read_patch(path).files:
                    if not f.path.startswith(PYPI_PREFIX) and path.name not in out.get(f.path, []):
                        out.setdefault(f.path, []).append(path.name)
        return out

    def check(self, dest: Path) -> dict[str, list[str]]:
        """Refuse a wheel base whose files are not the series' pre-images; return absent()."""
        if self.te_src is None:
            first = base_preimages([read_patch(p) for p in self.series.paths()])
            ours = {k: v for k, v in first.items() if k.startswith(PYPI_PREFIX)}
            mismatches = preimage_mismatches(dest, ours)
            if mismatches:
                raise SeriesError(
                    f"release {self.release} does not match the series' base:\n  "
                    + "\n  ".join(mismatches)
                    + "\nUse a git base (--te-src) or `te-series port` for a different release."
                )
        return self.absent()
