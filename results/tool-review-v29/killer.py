"""Run te_series.cli.main but SIGKILL the process just before its Nth step
(subprocess.run/Popen, os.replace, os.rename, Path.write_bytes/write_text, Path.unlink, shutil.rmtree, shutil.move).
KILL_AT=N ; KILL_COUNT=1 prints the number of steps at exit (to stderr) instead."""
import os, sys, signal, subprocess, shutil, atexit
from pathlib import Path
N = int(os.environ.get("KILL_AT", "0"))
SIG = int(os.environ.get("KILL_SIG", signal.SIGKILL))
LOG = os.environ.get("KILL_LOG")
cnt = [0]
def step(what):
    cnt[0] += 1
    if LOG:
        with open(LOG, "a") as f: f.write(f"{cnt[0]} {what}\n")
    if cnt[0] == N:
        sys.stderr.write(f"[killer] signal {SIG} before step {N}: {what}\n"); sys.stderr.flush()
        os.kill(os.getpid(), SIG)
def wrap(mod, name, label=None):
    orig = getattr(mod, name)
    def f(*a, **k):
        d = a[0] if a else ''
        if isinstance(d, (list, tuple)): d = ' '.join(map(str, d))[:150]
        step(f"{label or name} {d}")
        return orig(*a, **k)
    setattr(mod, name, f)
wrap(subprocess, "run"); wrap(subprocess, "Popen", "Popen")
wrap(os, "replace"); wrap(os, "rename"); wrap(shutil, "rmtree"); wrap(shutil, "move")
for m in ("write_bytes", "write_text", "unlink", "rename", "replace", "mkdir", "symlink_to"):
    orig = getattr(Path, m)
    def mk(orig, m):
        def f(self, *a, **k):
            step(f"Path.{m} {self}")
            return orig(self, *a, **k)
        return f
    setattr(Path, m, mk(orig, m))
if os.environ.get("KILL_COUNT"):
    atexit.register(lambda: sys.stderr.write(f"[killer] steps={cnt[0]}\n"))
from te_series.cli import main
sys.exit(main(sys.argv[1:]))
