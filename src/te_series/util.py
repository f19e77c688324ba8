"""The tool's ground floor: its errors, the project root, progress lines, messages' paths,
Ctrl-C holding and safe writes. Imports nothing of the tool.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path


SERIES_BRANCH = "series"


PYPI_PREFIX = "transformer_engine/"


PATCH_GLOB = "*.patch"


BACKUP_DIR = ".te-series-backup"


class SeriesError(Exception):
    """An error the user can act on. The message says what failed and how to recover."""


class PatchFailed(SeriesError):
    """`git am` stopped on a patch; the work tree is left at that patch for the user.

    The message names the patch, file and hunk and quotes git; the caller adds where the
    tree is and how to go on. `kind` says what happened: "conflict" (conflict markers in
    the tree), "unapplied" (nothing of the patch was applied), "io" (git failed though the
    diff applies: not the patch), "converted" (the patch file's lines end in CRLF),
    "already" (git am made no commit: the change is already in the tree) or "empty" (the
    patch has no diff).
    """

    def __init__(self, text: str, kind: str = "conflict"):
        super().__init__(text)
        self.kind = kind


def project_root() -> Path:
    """Root of the te-series checkout: $TE_SERIES_ROOT, else the folder holding patches/.

    When $TE_SERIES_ROOT names one checkout and the current directory is inside another,
    say which one is used: a variable left over from another shell must not go unnoticed.
    """
    here = Path.cwd().resolve()
    found = next((d for d in (here, *here.parents) if (d / "patches" / "series").is_file()), None)
    env = os.environ.get("TE_SERIES_ROOT")
    if env:
        root = Path(env).resolve()
        if not (root / "patches" / "series").is_file():
            raise SeriesError(
                f"TE_SERIES_ROOT={env} has no patches/series: restore it there (git -C {env} "
                "checkout -- patches/series), or unset TE_SERIES_ROOT to work where you are"
            )
        if found is not None and found != root:
            print(
                f"te-series: warning: working on {root} (the te-series script you ran, or "
                f"TE_SERIES_ROOT), not on the checkout you are in ({found}); to work on that "
                "one, run its own ./te-series",
                file=sys.stderr,
            )
        return root
    if found is None:
        raise SeriesError(
            "no patches/series found here or above; run inside a te-series checkout (in one "
            "whose patches/series is missing, restore it: git checkout -- patches/series)"
        )
    return found


def te_import_error(python: Path | str) -> str | None:
    """Why `python` cannot import torch and TE's PyTorch ops (its last stderr line), or None."""
    proc = subprocess.run(
        [str(python), "-c", "import torch, transformer_engine.pytorch.ops"],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode == 0:
        return None
    return (proc.stderr.strip().splitlines() or ["(no message)"])[-1]


def cache_dir() -> Path:
    """Cache for downloaded and built wheels, outside the repository."""
    d = Path(os.environ.get("TE_SERIES_CACHE", Path.home() / ".cache" / "te-series"))
    if d.exists() and not d.is_dir():  # a raw "File exists" (v34 #7)
        raise SeriesError(f"the te-series cache {d} ($TE_SERIES_CACHE) is no folder: name "
                          "a folder, or move that file away")  # fmt: skip
    d.mkdir(parents=True, exist_ok=True)
    return d


def progress(msg: str) -> None:
    """One line of progress on stderr, with a wall-clock stamp."""
    print(f"[te-series {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def rel(path: Path, root: Path) -> str:
    """path relative to root when it is inside, for messages."""
    try:  # the path's own last part is not followed: a link is named as itself
        own = Path(path).parent.resolve() / Path(path).name
        return str(own.relative_to(root.resolve())) or "."
    except (ValueError, RuntimeError, OSError):  # outside root; a link loop (v11 #9)
        return str(path)


# While a group of writes runs, Ctrl-C is held (no_interrupt) and git runs in its own
# session, so a terminal's Ctrl-C (SIGINT to the whole foreground process group) cannot
# kill git halfway through a write either. SIGTERM (kill, `timeout`) and SIGHUP (a closed
# terminal) count as a Ctrl-C: held the same, then a KeyboardInterrupt, so that their stops
# get Ctrl-C's cleanups and messages.
_HOLD = {"depth": 0}
STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _stop(signum, _frame=None):
    """Stop as a Ctrl-C does; the KeyboardInterrupt names any other signal."""
    raise KeyboardInterrupt(*([] if signum == signal.SIGINT else [signal.Signals(signum).name]))


def stop_as_ctrl_c() -> None:
    """Let SIGTERM and SIGHUP raise KeyboardInterrupt, as SIGINT does (cli.main); one that
    was ignored before (nohup ignores SIGHUP) stays ignored."""
    for s in STOPS[1:]:
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, _stop)


@contextlib.contextmanager
def no_interrupt():
    """Hold Ctrl-C (and SIGTERM, SIGHUP) until the block is done, so that a group of writes
    is all or nothing.

    Nested blocks belong to the outermost one: only it raises the held KeyboardInterrupt.
    """
    if _HOLD["depth"]:
        _HOLD["depth"] += 1
        try:
            yield
        finally:
            _HOLD["depth"] -= 1
        return
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach the main thread only
        return
    caught = []
    old = {s: signal.signal(s, lambda n, _: caught.append(n)) for s in STOPS}
    _HOLD["depth"] = 1
    try:
        yield
    finally:
        _HOLD["depth"] = 0
        for s, handler in old.items():
            signal.signal(s, handler)
    # A signal that was ignored before (nohup, `cmd &` in a script) stays ignored.
    held = [n for n in caught if old[n] is not signal.SIG_IGN]
    if held:
        _stop(held[0])


@contextlib.contextmanager
def one_at_a_time(root: Path, verb: str):
    """Hold the project's lock (a flock of its folder) while a verb that writes runs; a second
    one refuses until the first has ended (v11 #8: two apply --force undid each other)."""
    fd = os.open(root, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SeriesError(
                f"another te-series command is running in {root} (apply, export, rebase, port, "
                "build and pr run one at a time in a project): wait until it has ended, then "
                f"run te-series {verb} again; nothing was done."
            ) from None
        yield
    finally:
        os.close(fd)


def locked(root: Path) -> bool:
    """Whether a verb that writes holds the project's lock now (one_at_a_time)."""
    with contextlib.suppress(SeriesError), one_at_a_time(root, ""):
        return False
    return True


FIX_LINE = "Fix that line in an editor"


def read_text(path: Path, root: Path | None = None, mend: str = "") -> str:
    """A project text file as UTF-8; an error naming the file, line and byte when it is not,
    and `mend`, how to get past it (by default: fix the line or restore the file)."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8").removeprefix("\ufeff")  # an editor's byte-order mark
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        label = rel(path, root) if root else str(path)
        mend = mend or f"{FIX_LINE}, or restore the file (git checkout -- {label})."
        raise SeriesError(
            f"{label} is not UTF-8 text: line {line}, column {col} has the byte "
            f"0x{data[e.start]:02X}. {mend}"
        ) from None


def write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.te-series-tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)
