"""Run te_series.cli.main but make its Nth step fail as on a full disk (ENOSPC): a write
(os.replace/rename, Path.write_bytes/write_text/mkdir, open for writing) raises OSError(28); a git
subprocess that writes is not run and returns rc 128 with git's 'No space left on device' message.
FAIL_AT=N; FAIL_LOG=F lists the steps; FAIL_ALL=1 makes every step from N on fail."""
import os, sys, errno, subprocess, shutil, atexit
from pathlib import Path
N = int(os.environ.get("FAIL_AT", "0")); ALL = os.environ.get("FAIL_ALL")
LOG = os.environ.get("FAIL_LOG")
cnt = [0]
READONLY_GIT = {"rev-parse", "log", "show", "diff", "status", "ls-files", "cat-file", "merge-base",
                "rev-list", "patch-id", "check-attr", "var", "mailinfo", "mailsplit", "for-each-ref",
                "symbolic-ref", "config", "interpret-trailers", "ls-tree", "diff-tree", "range-diff", "hash-object", "name-rev", "describe", "branch", "tag", "worktree"}
def hit(what):
    cnt[0] += 1
    if LOG:
        with open(LOG, "a") as f: f.write(f"{cnt[0]} {what}\n")
    return cnt[0] == N or (ALL and cnt[0] >= N > 0)
def gitverb(cmd):
    args = [a for a in cmd[1:]]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-c" or a == "-C": i += 2; continue
        if a.startswith("-"): i += 1; continue
        return a
    return ""
orig_run = subprocess.run
def run(cmd, *a, **k):
    if isinstance(cmd, (list, tuple)) and cmd and os.path.basename(str(cmd[0])) == "git":
        v = gitverb(list(map(str, cmd)))
        if v == "notes" and "show" in cmd: v = "notes-show"
        if v not in READONLY_GIT and v != "notes-show":
            if hit(f"git {v} {' '.join(map(str,cmd))[-120:]}"):
                sys.stderr.write(f"[failer] ENOSPC for git {v}\n")
                err = b"error: unable to write file: No space left on device\nfatal: No space left on device\n"
                return subprocess.CompletedProcess(cmd, 128, b"" if not k.get("text") else "", err if not k.get("text") else err.decode())
    return orig_run(cmd, *a, **k)
subprocess.run = run
def wrap(mod, name):
    orig = getattr(mod, name)
    def f(*a, **k):
        if hit(f"{name} {a[:2]}"):
            sys.stderr.write(f"[failer] ENOSPC at {name} {a[:2]}\n")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(a[0]) if a else None)
        return orig(*a, **k)
    setattr(mod, name, f)
wrap(os, "replace"); wrap(os, "rename")
for m in ("write_bytes", "write_text", "mkdir"):
    orig = getattr(Path, m)
    def mk(orig, m):
        def f(self, *a, **k):
            if hit(f"Path.{m} {self}"):
                sys.stderr.write(f"[failer] ENOSPC at Path.{m} {self}\n")
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self))
            return orig(self, *a, **k)
        return f
    setattr(Path, m, mk(orig, m))
from te_series.cli import main
sys.exit(main(sys.argv[1:]))
