"""L0's te.ops files on one GPU: run them concurrently, rerun failures, compare with the base.

Used by gpu/h200.sh (`l0`, `l0-base`); stdlib only.

    h200_l0.py run --te-path TREE --out DIR [--pythonpath P] [--slots 20] [--budget 480]
    h200_l0.py rerun --patched TREE --base TREE --l0 DIR --out DIR [--pythonpath-base P] ...
    h200_l0.py compare --l0 DIR --rerun DIR [--known FILE] > l0-compare.md

Environment variables and options of each file are those of upstream
qa/L0_pytorch_unittest/test.sh at the base commit (global exports, per-line variables, and
NVTE_TEST_CHECKPOINT_ARTIFACT_PATH for the lines after the checkpoint block), plus -rfE, a
junit xml per file and, where noted, pytest-xdist's -n (L0 runs every file serially).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

GLOBAL_ENV = {"NVTE_FLASH_ATTN_V2": "1", "NVTE_FLASH_ATTN_V3": "0", "NVTE_FLASH_ATTN_V4": "0"}
NOJIT = {"PYTORCH_JIT": "0", "NVTE_TORCH_COMPILE": "0"}
COLLECTION = "<collection>"
CKPT = "artifacts/tests/pytorch/test_checkpoint"  # under TE_PATH, as test.sh sets it

# (file, L0's per-line variables, xdist workers or 0, after the checkpoint export in test.sh)
# Listed in start order: longest (guessed) first, test_fusible_ops first of all.
JOBS = [
    ("test_fusible_ops.py", {}, 6, False),
    ("test_sanity.py", {"NVTE_GROUPED_LINEAR_SINGLE_PARAM": "1"}, 4, False),
    ("test_backward_override.py", {}, 4, False),
    ("test_torch_compile.py", {}, 3, False),
    ("test_hybrid_quantization.py", {}, 3, False),
    ("test_cpu_offloading.py", {}, 2, False),
    (
        "test_cuda_graphs.py",
        {**NOJIT, "NVTE_ALLOW_NONDETERMINISTIC_ALGO": "0", "NVTE_FUSED_ATTN": "0"},
        2,
        False,
    ),
    ("test_identity_quantizer.py", {}, 2, False),
    (
        "test_grouped_mlp.py",
        {"NVTE_GROUPED_LINEAR_SINGLE_PARAM": "1", "NVTE_CUTEDSL_FUSED_GROUPED_MLP": "1"},
        2,
        True,
    ),
    ("test_recipe.py", {}, 0, False),  # no xdist (state shared across tests)
    ("test_custom_recipe.py", {}, 0, False),
    ("test_cpu_offloading_v1.py", {"NVTE_FLASH_ATTN": "0", "NVTE_CPU_OFFLOAD_V1": "1"}, 0, False),
    ("test_checkpoint.py", {}, 0, True),
    ("test_qk_norm.py", {}, 0, False),
    ("test_ops_grouped_linear_distributed_weight.py", NOJIT, 0, True),
]


def job_env(te_path: Path, extra: dict, after_ckpt: bool) -> dict:
    env = dict(GLOBAL_ENV)
    if after_ckpt:
        env["NVTE_TEST_CHECKPOINT_ARTIFACT_PATH"] = str(te_path / CKPT)
    env.update(extra)
    return env


def stem(name: str) -> str:
    return name[: -len(".py")]


def command(te_path: Path, name: str, n: int, xml: Path, ids=None) -> list[str]:
    cmd = [sys.executable, "-m", "pytest"]
    if n:
        cmd += ["-n", str(n)]
    cmd += ["--tb=auto", "-rfE", f"--junitxml={xml}"]
    cmd += ids if ids else [str(te_path / "tests" / "pytorch" / name)]
    return cmd


def shell_line(env: dict, cmd: list[str], cwd: Path, pythonpath: str | None) -> str:
    full = dict(env)
    if pythonpath:
        full["PYTHONPATH"] = pythonpath
    pre = " ".join(f"{k}={shlex.quote(v)}" for k, v in full.items())
    return f"(cd {shlex.quote(str(cwd))} && {pre} {shlex.join(cmd)})"


class Running:
    def __init__(self, name, proc, log, start, slots):
        self.name, self.proc, self.log, self.start, self.slots = name, proc, log, start, slots
        self.interrupted = False


def launch(cmd, env, cwd, log_path, pythonpath):
    full = {**os.environ, **env}
    if pythonpath is not None:
        full["PYTHONPATH"] = pythonpath
    log = open(log_path, "w", encoding="utf-8")  # pylint: disable=consider-using-with
    return subprocess.Popen(
        cmd, env=full, cwd=cwd, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )


def cmd_run(a) -> int:
    te_path = Path(a.te_path).resolve()
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    cwd = Path(a.cwd).resolve() if a.cwd else out
    only = set(a.only.split(",")) if a.only else None
    jobs = [j for j in JOBS if only is None or stem(j[0]) in only or j[0] in only]
    t0 = time.time()
    deadline = t0 + a.budget
    status = {}
    commands = [
        f"# L0 te.ops files, TE_PATH={te_path}, python={sys.executable}",
        f"# started {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime(t0))}, slots={a.slots}",
    ]
    pending = list(jobs)
    running: list[Running] = []

    def start(job):
        name, extra, n, after = job
        n = 0 if a.serial else (a.workers or n) if n else 0
        env = job_env(te_path, extra, after)
        xml = out / f"pytest_{stem(name)}.xml"
        cmd = command(te_path, name, n, xml)
        log = out / f"{stem(name)}.log"
        if name == "test_checkpoint.py":
            # test.sh: generate the artifacts first if the folder is absent (in the job's shell)
            env = {**env, "NVTE_TEST_CHECKPOINT_ARTIFACT_PATH": str(te_path / CKPT)}
            gen = [sys.executable, str(te_path / "tests/pytorch/test_checkpoint.py")]
            gen += ["--save-checkpoint", "all"]
            art = shlex.quote(str(te_path / CKPT))
            commands.append(f"[ -d {art} ] || " + shell_line(env, gen, cwd, a.pythonpath))
            script = f"[ -d {art} ] || {shlex.join(gen)} || exit 97; exec {shlex.join(cmd)}"
            cmd_run_ = ["bash", "-c", script]
        else:
            cmd_run_ = cmd
        commands.append(shell_line(env, cmd, cwd, a.pythonpath))
        (out / "commands.txt").write_text("\n".join(commands) + "\n")
        print(f"[l0 {time.time() - t0:5.0f}s] start {name} (-n {n})", flush=True)
        return Running(
            name, launch(cmd_run_, env, cwd, log, a.pythonpath), log, time.time(), max(n, 1)
        )

    while pending or running:
        now = time.time()
        for r in list(running):
            rc = r.proc.poll()
            if rc is None and now > deadline and not r.interrupted:
                print(f"[l0 {now - t0:5.0f}s] budget spent: SIGINT {r.name}", flush=True)
                try:
                    os.kill(r.proc.pid, signal.SIGINT)  # pytest writes its junit xml
                except ProcessLookupError:
                    pass
                r.interrupted = True
            if rc is None and r.interrupted and now > deadline + a.grace:
                try:
                    os.killpg(r.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if rc is not None:
                running.remove(r)
                status[r.name] = {
                    "rc": rc,
                    "secs": round(now - r.start, 1),
                    "interrupted": r.interrupted,
                }
                tail = r.log.read_text(errors="replace").strip().splitlines()[-1:]
                print(f"[l0 {now - t0:5.0f}s] done {r.name} rc={rc} {tail}", flush=True)
        used = sum(r.slots for r in running)
        while pending and now < deadline:
            job = pending[0]
            need = 1 if a.serial else max(job[2], 1)
            if running and used + need > a.slots:
                # fill free slots with a later job that fits (small serial files)
                fit = next((j for j in pending if used + max(j[2], 1) <= a.slots), None)
                if fit is None:
                    break
                job, need = fit, max(fit[2], 1)
            pending.remove(job)
            r = start(job)
            if r is not None:
                running.append(r)
                used += need
        if pending and now >= deadline:
            for job in pending:
                status[job[0]] = {"rc": None, "note": "not started (budget spent)", "secs": 0}
            pending = []
        (out / "status.json").write_text(json.dumps(status, indent=1))
        time.sleep(1)
    (out / "status.json").write_text(json.dumps(status, indent=1))
    print(f"[l0 {time.time() - t0:5.0f}s] all done", flush=True)
    return 0


# --------------------------------------------------------------------------- junit


def read_junit(xml: Path) -> dict[str, str]:
    """nodeid (relative to tests/pytorch) -> passed | failed | error | skipped."""
    res: dict[str, str] = {}
    if not xml.is_file():
        return res
    try:
        root = ET.parse(xml).getroot()
    except ET.ParseError:
        return res
    for tc in root.iter("testcase"):
        cls = tc.get("classname", "")
        name = tc.get("name", "")
        parts = cls.split(".") if cls else name.split(".")
        mod_i = max((i for i, p in enumerate(parts) if p.startswith("test_")), default=None)
        if mod_i is None:
            continue
        if cls:
            nodeid = "::".join([parts[mod_i] + ".py", *parts[mod_i + 1 :], name])
        else:  # a collection error: the whole file
            nodeid = parts[mod_i] + ".py::" + COLLECTION
        kinds = {child.tag for child in tc}
        if "error" in kinds:
            state = "error"
        elif "failure" in kinds:
            state = "failed"
        elif "skipped" in kinds:
            state = "skipped"
        else:
            state = "passed"
        # a test can appear twice (failure in call, error in teardown): keep the worst
        order = ["passed", "skipped", "failed", "error"]
        if nodeid not in res or order.index(state) > order.index(res[nodeid]):
            res[nodeid] = state
    return res


def counts(res: dict[str, str]) -> dict[str, int]:
    c = {"passed": 0, "failed": 0, "error": 0, "skipped": 0}
    for v in res.values():
        c[v] += 1
    return c


def bad(res: dict[str, str]) -> list[str]:
    return sorted(k for k, v in res.items() if v in ("failed", "error"))


def collect_ids(te_path: Path, name: str, env: dict, cwd: Path, pythonpath, log: Path) -> set:
    cmd = [sys.executable, "-m", "pytest", "--co", "-q", str(te_path / "tests/pytorch" / name)]
    full = {**os.environ, **env}
    if pythonpath is not None:
        full["PYTHONPATH"] = pythonpath
    p = subprocess.run(cmd, env=full, cwd=cwd, capture_output=True, text=True, check=False)
    log.write_text(p.stdout[-20000:] + p.stderr[-5000:])
    ids = set()
    for line in p.stdout.splitlines():
        if "::" in line:
            ids.add(name + "::" + line.split(".py::", 1)[1] if ".py::" in line else line)
    return ids


def cmd_rerun(a) -> int:
    """Rerun each file's failed ids alone: on the base and on the patched tree."""
    l0 = Path(a.l0).resolve()
    out = Path(a.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    cwd = Path(a.cwd).resolve() if a.cwd else out
    trees = {"base": (Path(a.base).resolve(), a.pythonpath_base)}
    if a.patched:
        trees["patched"] = (Path(a.patched).resolve(), a.pythonpath_patched)
    lines = []
    procs = []
    for name, extra, _n, after in JOBS:
        failed = [
            i for i in bad(read_junit(l0 / f"pytest_{stem(name)}.xml")) if COLLECTION not in i
        ]
        if not failed:
            continue
        failed = failed[: a.max_ids]
        for label, (tree, pp) in trees.items():
            env = job_env(tree, extra, after)
            if name == "test_checkpoint.py":
                env["NVTE_TEST_CHECKPOINT_ARTIFACT_PATH"] = str(tree / CKPT)
                if not (tree / CKPT).is_dir():
                    gen = [sys.executable, str(tree / "tests/pytorch/test_checkpoint.py")]
                    full = {**os.environ, **env, **({"PYTHONPATH": pp} if pp is not None else {})}
                    with open(
                        out / f"{label}_test_checkpoint.generate.log", "w", encoding="utf-8"
                    ) as f:
                        subprocess.call(
                            gen + ["--save-checkpoint", "all"],
                            env=full,
                            cwd=cwd,
                            stdout=f,
                            stderr=subprocess.STDOUT,
                        )
            have = collect_ids(tree, name, env, cwd, pp, out / f"{label}_{stem(name)}.collect.log")
            ids = [i for i in failed if i in have]
            (out / f"{label}_{stem(name)}.absent.txt").write_text(
                "\n".join(sorted(set(failed) - set(ids))) + "\n"
            )
            if not ids:
                continue
            xml = out / f"{label}_{stem(name)}.xml"
            full_ids = [str(tree / "tests/pytorch" / i) for i in ids]
            cmd = command(tree, name, 4 if len(ids) > 40 else 0, xml, ids=full_ids)
            shown = command(tree, name, 4 if len(ids) > 40 else 0, xml, ids=[f"<{len(ids)} ids>"])
            lines.append(
                f"# {label} {name}: {len(ids)} failed ids of the L0 run\n"
                + shell_line(env, shown, cwd, pp)
            )
            (out / f"{label}_{stem(name)}.ids").write_text("\n".join(ids) + "\n")
            procs.append(
                (label, name, launch(cmd, env, cwd, out / f"{label}_{stem(name)}.log", pp))
            )
    (out / "commands.txt").write_text("\n".join(lines) + "\n")
    t0 = time.time()
    for label, name, p in procs:
        left = max(1, a.budget - (time.time() - t0))
        try:
            p.wait(timeout=left)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGINT)
            time.sleep(10)
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
        print(f"rerun {label} {name}: rc={p.poll()}", flush=True)
    return 0


def cmd_compare(a) -> int:
    l0 = Path(a.l0)
    rr = Path(a.rerun) if a.rerun else None
    known = set()
    if a.known and Path(a.known).is_file():
        for line in Path(a.known).read_text().splitlines():
            line = line.strip()
            if line.startswith("FAILED ") or line.startswith("ERROR "):
                line = line.split(" ", 1)[1].split(" - ")[0]
            if line:
                known.add(line)
    st = {}
    if (l0 / "status.json").is_file():
        st = json.loads((l0 / "status.json").read_text())
    out = ["# L0 te.ops files: patched run, failed ids rerun alone on the base and patched", ""]
    out.append(
        "| file | passed | failed | error | skipped | secs | rc | failed ids base-fail | patched-only |"
    )
    out.append("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    detail = []
    total_only = []
    for name, *_ in JOBS:
        res = read_junit(l0 / f"pytest_{stem(name)}.xml")
        c = counts(res)
        s = st.get(name, {})
        rc = s.get("rc")
        note = (
            " (interrupted)"
            if s.get("interrupted")
            else (f" ({s['note']})" if s.get("note") else "")
        )
        failed = bad(res)
        base = read_junit(rr / f"base_{stem(name)}.xml") if rr else {}
        again = read_junit(rr / f"patched_{stem(name)}.xml") if rr else {}
        absent_f = rr / f"base_{stem(name)}.absent.txt" if rr else None
        absent = set(absent_f.read_text().split()) if absent_f and absent_f.is_file() else set()
        only = []
        rows = []
        for i in failed:
            if COLLECTION in i:  # never rerun: not counted as patched-only, said so
                rows.append(
                    f"    {i}: collection error of the whole file, not rerun on the base "
                    "(see its log; run the file on the base to compare)"
                )
                continue
            b = base.get(i, "not in base" if i in absent else "not rerun")
            p = again.get(i, "not rerun")
            k = " known" if f"{i}" in known else ""
            rows.append(f"    {i}: patched {res[i]}, alone: patched {p}, base {b}{k}")
            if b in ("passed", "skipped", "not in base") and p not in ("passed", "skipped"):
                only.append(i)
        base_fail = sum(1 for i in failed if base.get(i) in ("failed", "error"))
        out.append(
            f"| {name} | {c['passed']} | {c['failed']} | {c['error']} | {c['skipped']} | "
            f"{s.get('secs', '')} | {rc}{note} | {base_fail}/{len(failed)} | {len(only)} |"
        )
        if failed:
            detail.append(f"## {name}: {len(failed)} failed or errored")
            detail += rows
            if only:
                detail.append("  failing on patched only (base passes, patched fails alone too):")
                detail += [f"    {i}" for i in only]
            detail.append("")
        total_only += only
    if known:
        res = read_junit(l0 / "pytest_test_fusible_ops.xml")
        f = set(bad(res))
        out += [
            "",
            f"test_fusible_ops.py against the known base failures ({len(known)} ids): "
            f"{len(f & known)} of them fail here, {len(known - f)} do not, "
            f"{len(f - known)} failures not in the list",
        ]
    out += ["", f"**failing on patched only: {len(total_only)}**", ""] + detail
    print("\n".join(out))
    return 0


def main() -> int:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run")
    r.add_argument("--te-path", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--cwd")
    r.add_argument("--pythonpath")
    r.add_argument("--slots", type=int, default=20)
    r.add_argument("--budget", type=float, default=480)
    r.add_argument("--grace", type=float, default=25)
    r.add_argument("--only", help="comma-separated file stems")
    r.add_argument("--serial", action="store_true", help="no xdist (local dry runs)")
    r.add_argument("--workers", type=int, help="xdist workers for each file that uses xdist")
    r.set_defaults(fn=cmd_run)
    r = sub.add_parser("rerun")
    r.add_argument("--l0", required=True)
    r.add_argument("--base", required=True)
    r.add_argument("--patched")
    r.add_argument("--out", required=True)
    r.add_argument("--cwd")
    r.add_argument("--pythonpath-base")
    r.add_argument("--pythonpath-patched")
    r.add_argument("--max-ids", type=int, default=400)
    r.add_argument("--budget", type=float, default=150)
    r.set_defaults(fn=cmd_rerun)
    r = sub.add_parser("compare")
    r.add_argument("--l0", required=True)
    r.add_argument("--rerun")
    r.add_argument("--known")
    r.set_defaults(fn=cmd_compare)
    a = p.parse_args()
    return a.fn(a)


if __name__ == "__main__":
    sys.exit(main())
