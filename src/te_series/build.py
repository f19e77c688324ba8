"""`te-series build`: install Transformer Engine with the series applied.

PyPI base (default), CPU stack in the project venv (.venv):

1. torch (installed once per version in the cache, hard-linked into each venv), the
   release's core wheel (`transformer-engine-cu13`) and the build deps;
2. `transformer_engine_torch` built from its sdist once and cached outside the repo
   (about 9 minutes on 2 cores; progress is printed);
3. the release's `transformer_engine` wheel with the series applied, repacked as
   `transformer_engine-<release>+series.<n>`.

TE refuses to import unless `transformer-engine`, `transformer-engine-cu13` and
`transformer_engine_torch` carry the same version string, so the two unchanged
companions are relabelled to the same `+series.<n>` local version (metadata only).

Git base (``--te-src PATH``): TE's own pipeline, `pip install --no-build-isolation -e fork/`
with the NVTE_* settings below, for a machine with CUDA.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
import venv
from importlib import metadata
from pathlib import Path

from .util import cache_dir, PatchFailed, progress, SeriesError, te_import_error
from .series import load_series, Series
from .base import cached_wheel, release_wheel
from .worktree import make_tree, read_state, report_absent, WorkTree

BUILD_DEPS = [
    "pydantic",
    "importlib-metadata",
    "packaging",
    "einops",
    "onnx",
    "onnxscript",
    "nvdlfw-inspect",
    "nvidia-cudnn-frontend>=1.29.0",
    "ninja",
    "wheel",
    "setuptools",
    "nvidia-cuda-crt==13.0.*",
    "nvidia-cuda-cccl==13.0.*",
    # TE's core loads libcurand at import; torch 2.14.1 brought it, torch 2.15.0 does not.
    # Unpinned, the extra takes the nvidia-curand of the cuda-toolkit that torch installed.
    "cuda-toolkit[curand]",
]
EXT_BUILD_ENV = {
    "NVTE_BUILD_USE_NVIDIA_WHEELS": "1",
    "NVTE_PYTORCH_FORCE_BUILD": "TRUE",
    "NVTE_CUDA_ARCHS": "90",
    "MAX_JOBS": str(os.cpu_count() or 2),
}
GIT_BUILD_ENV = {
    "NVTE_FRAMEWORK": "pytorch",
    "NVTE_CUDA_ARCHS": "90",
    "NVTE_WITH_NCCL_EP": "0",
    "NVTE_SKIP_SUBMODULE_CHECKS_DURING_BUILD": "1",
    "MAX_JOBS": str(os.cpu_count() or 2),
}


def run_logged(cmd: list[str], *, what: str, env: dict | None = None, cwd=None) -> None:
    """Run a long command; print a heartbeat every 30 s and the log tail on failure."""
    start = time.time()
    with tempfile.NamedTemporaryFile("w+", suffix=".log", delete=False) as log:
        proc = subprocess.Popen(
            cmd,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            cwd=cwd,
        )
        stop = threading.Event()

        def beat():
            while not stop.wait(30):
                progress(f"{what}: still running ({time.time() - start:.0f} s)")

        t = threading.Thread(target=beat, daemon=True)
        t.start()
        rc = proc.wait()
        stop.set()
        t.join()
    if rc != 0:
        tail = Path(log.name).read_text().splitlines()[-40:]
        raise SeriesError(f"{what} failed (exit {rc}); full log: {log.name}\n" + "\n".join(tail))
    os.unlink(log.name)
    progress(f"{what}: done in {time.time() - start:.0f} s")


def baseline_venv(release: str) -> Path:
    """Where `build --baseline` puts the unpatched release (outside the repository)."""
    return cache_dir() / f"venv-{release}"


def venv_python(root: Path, path: Path | None = None) -> Path:
    """The project venv's python (or another venv's), created on first use."""
    path = path or root / ".venv"
    py = path / "bin" / "python"
    if not py.exists():
        progress(f"creating venv {path}")
        venv.create(path, with_pip=True)
    return py


def pip(py: Path, *args: str, what: str, env: dict | None = None) -> None:
    run_logged([str(py), "-m", "pip", *args], what=what, env=env)


def relabel(wheel: Path, version: str, out: Path, tree: Path | None = None) -> Path:
    """Repack a wheel under another version; with `tree`, also replace its package files."""
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(
            [sys.executable, "-m", "wheel", "unpack", "-d", tmp, str(wheel)],
            check=True,
            capture_output=True,
        )
        (unpacked,) = Path(tmp).iterdir()
        (info,) = unpacked.glob("*.dist-info")
        name, old = info.name[: -len(".dist-info")].rsplit("-", 1)
        meta = info / "METADATA"
        text = meta.read_text()
        meta.write_text(text.replace(f"\nVersion: {old}\n", f"\nVersion: {version}\n", 1))
        info.rename(info.with_name(f"{name}-{version}.dist-info"))
        if tree is not None:
            pkg = unpacked / "transformer_engine"
            shutil.rmtree(pkg)
            shutil.copytree(tree / "transformer_engine", pkg)
        subprocess.run(
            [sys.executable, "-m", "wheel", "pack", "-d", str(out), str(unpacked)],
            check=True,
            capture_output=True,
        )
    (built,) = out.glob(f"{name}-{version}-*.whl")
    return built


def core_wheel(series: Series, release: str) -> Path:
    """The release's TE core wheel (transformer-engine-cu13), downloaded once."""
    name = series.base_value("pypi", "core")
    return cached_wheel(f"{name}=={release}", f"{name.replace('-', '_')}-{release}-*.whl")


def install_te(py: Path, te: Path, core: Path, ext: Path) -> None:
    """Install the three TE wheels together (their versions must match)."""
    pip(
        py,
        "install",
        "-q",
        "--no-deps",
        "--force-reinstall",
        str(te),
        str(core),
        str(ext),
        what=f"install {te.name}",
    )


def ext_wheel(py: Path, release: str, torch: str) -> Path:
    """transformer_engine_torch for this release, built from sdist once per torch, then
    cached: it is compiled against that torch's C++ headers, and PyTorch keeps no C++ ABI
    between releases (a 2.14.1 build loads with 2.15.0, but nothing says that it works)."""
    wheels = cache_dir() / "wheels" / f"torch-{torch}"
    wheels.mkdir(parents=True, exist_ok=True)
    pattern = f"transformer_engine_torch-{release}-*.whl"
    found = sorted(wheels.glob(pattern))
    if found:
        progress(f"using cached {found[0].name}")
        return found[0]
    progress("building transformer_engine_torch from sdist: ~9 min on 2 cores, cached after")
    pip(
        py,
        "wheel",
        "--no-build-isolation",
        "--no-deps",
        "-w",
        str(wheels),
        f"transformer-engine-torch=={release}",
        what="build transformer_engine_torch",
        env=EXT_BUILD_ENV,
    )
    return sorted(wheels.glob(pattern))[0]


def purelib(py: Path) -> Path:
    """The site-packages folder of the venv that `py` belongs to."""
    cmd = [str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]
    return Path(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip())


def torch_layer(root: Path, torch: str) -> Path:
    """torch with what it pulls in (about 5.5 GB), installed once per version and Python in
    the cache; returns its site-packages folder (found by its layout, so a layer whose python
    went away, with a Python upgrade, still links). A lock makes a second build wait for the
    first's install; a layer without its completion mark (an interrupted install) is redone.
    """
    layer = cache_dir() / f"torch-{torch}-{sys.implementation.cache_tag}"
    with open(f"{layer}.lock", "w", encoding="utf-8") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            progress(f"waiting for another te-series build to finish installing {layer.name}")
            fcntl.flock(lock, fcntl.LOCK_EX)
        done = layer / "te-series-complete"
        if not done.exists():
            shutil.rmtree(layer, ignore_errors=True)
            py = venv_python(root, layer)
            # Not -q: the log then holds pip's reason for a refusal (install_stack reads it)
            pip(py, "install", f"torch=={torch}", what=f"install torch=={torch}")
            done.touch()
    return Path(sysconfig.get_path("purelib", "posix_prefix", {"base": layer, "platbase": layer}))


def dist_name(dist: metadata.Distribution) -> str:
    """The normalized name (PEP 503); "" for a dist-info without one (a broken install)."""
    return re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()


def damaged(layer: Path, what: str) -> SeriesError:
    return SeriesError(
        f"the torch layer {layer} is damaged: {what}; remove it (rm -r {layer}) and rerun the "
        "build, which installs it again"
    )


def place(src: Path, dst: Path, layer: Path) -> bool:
    """Put src at dst as a hard link, or a copy where the file system can't link; True if
    linked. Through a temporary name, so that an interrupted copy is never left at dst."""
    if not src.exists():
        raise damaged(layer, f"{src} is missing")
    if dst.exists() and os.path.samefile(src, dst):  # linked by an interrupted run; and
        return True  # renaming a second link of a file over it would leave that link behind
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f"{dst.name}.te-series-tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(src, tmp)
        linked = True
    except OSError:
        shutil.copy2(src, tmp)
        linked = False
    os.replace(tmp, dst)
    return linked


def link_layer(site: Path, py: Path) -> None:
    """Give py's venv the layer's distributions as hard links: one copy on disk for all venvs.

    A distribution is the files its RECORD lists. One the venv already has (pip, setuptools)
    is left to it, so the pip run after this upgrades it if torch needs that. Each dist-info
    is put together under a hidden name and renamed into place after the distribution's
    files and console scripts, so pip never sees a part of one. pip can still upgrade or
    remove a linked distribution in one venv: it unlinks files, it never writes into them.
    An edit in place would change every venv and the layer.
    """
    layer = site.parents[2]
    target = purelib(py)
    if target.parent.name != site.parent.name:  # another Python: its pip installs torch
        return
    have = {dist_name(d) for d in metadata.distributions(path=[str(target)])}
    copied = False
    for dist in metadata.distributions(path=[str(site)]):
        if dist_name(dist) in have:
            continue
        files = [f for f in dist.files or () if ".." not in f.parts]  # not the ../../bin ones
        info = next((f.parts[0] for f in files if f.parts[0].endswith(".dist-info")), None)
        if info is None:
            raise damaged(layer, f"{dist.metadata['Name']} has no RECORD")
        staged = target / f".{info}.te-series-tmp"
        for f in files:
            dst = staged.joinpath(*f.parts[1:]) if f.parts[0] == info else target / f
            copied |= not place(site / f, dst, layer)
        for ep in dist.entry_points.select(group="console_scripts"):
            script = py.parent / ep.name
            script.write_text(
                f"#!{py}\nimport sys\nfrom {ep.module} import {ep.attr.split('.')[0]}\n"
                f"sys.exit({ep.attr}())\n"
            )
            script.chmod(0o755)
        shutil.rmtree(target / info, ignore_errors=True)  # one without a name: broken
        os.rename(staged, target / info)
    if copied:
        progress(f"{layer} and {target} are on different file systems: torch was copied")


def torch_version(series: Series, release: str) -> str:
    """The torch of this release's CPU build: base.toml's [pypi] torch for the pinned
    release, [port] torch for any other."""
    return series.base_value("pypi" if release == series.release else "port", "torch")


def install_stack(root: Path, py: Path, series: Series, torch: str) -> None:
    """torch, TE's build and runtime deps, and te-series itself with its dev tools."""
    try:
        link_layer(torch_layer(root, torch), py)
        # A no-op once linked; installs torch in the venv if the layer does not satisfy it.
        pip(py, "install", f"torch=={torch}", what=f"check torch=={torch}")
        pip(py, "install", "-q", *BUILD_DEPS, what="install build and runtime deps")
    except SeriesError as err:
        if "(constraint) torch" not in str(err):
            raise
        raise SeriesError(
            f"{err}\npip's configuration holds a constraint on torch that excludes torch=={torch}, "
            "the torch base.toml gives this build (pip config list names the file). Lift it "
            "for the build (PIP_CONSTRAINT=/dev/null ./te-series build ..., as .ci/run does) "
            "or remove it from pip's configuration."
        ) from None
    pip(py, "install", "-q", "-e", f"{root}[dev]", what="install te-series and dev tools")


def build_baseline(root: Path, series: Series, release: str) -> Path:
    """The unpatched release in its own venv, to compare against (bench, acceptance)."""
    te = release_wheel(release, series)  # an unknown release fails here, before the venv
    py = venv_python(root, baseline_venv(release))
    torch = torch_version(series, release)
    install_stack(root, py, series, torch)
    install_te(py, te, core_wheel(series, release), ext_wheel(py, release, torch))
    return py


def release_venv(root: Path, series: Series, release: str) -> Path:
    """The project venv for a release: .venv for the pinned one, .venv-<release> for ports."""
    return root / (".venv" if release == series.release else f".venv-{release}")


def build_pypi(root: Path, series: Series, release: str, wheel: Path | None) -> str:
    te_wheel = wheel or release_wheel(release, series)  # unknown release: fail before the venv
    if release != series.release:
        release_wheel(series.release, series)  # the port's merge base
    py = venv_python(root, release_venv(root, series, release))
    torch = torch_version(series, release)
    install_stack(root, py, series, torch)
    n = len(series.names())
    version = f"{release}+series.{n}"
    out = cache_dir() / "patched" / version
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="te-series-build-") as tmp:
        tree = Path(tmp) / "tree"
        try:
            if release == series.release:
                report_absent(make_tree(series, tree, wheel=te_wheel))
            else:
                from .port import port_tree

                port_tree(series, release, tree)
        except PatchFailed as err:
            raise SeriesError(f"{err}Nothing was installed.") from None
        progress(f"packing transformer_engine-{version}")
        patched = relabel(te_wheel, version, out, tree=tree)
    core_src = core_wheel(series, release)
    core = sorted(out.parent.glob(f"core-{release}/{version}/*.whl"))
    if not core:
        progress(f"relabelling {core_src.name} as {version} (metadata only, ~1 min, cached)")
        core_out = out.parent / f"core-{release}" / version
        core_out.mkdir(parents=True, exist_ok=True)
        core = [relabel(core_src, version, core_out)]
    install_te(py, patched, core[0], relabel(ext_wheel(py, release, torch), version, out))
    why = te_import_error(py)
    if why is not None:
        raise SeriesError(f"the installed build does not import: {why}")
    return version


def build_git(root: Path, series: Series, te_src: Path, force: bool) -> None:
    fork = WorkTree(root).path
    if force or not fork.exists():
        for line in WorkTree(root).build(
            lambda d: make_tree(series, d, te_src=te_src), force=force
        ):
            print(f"kept: {line}")
    state = read_state(fork)
    if state is None or not state.complete or state.kind != "git":
        raise SeriesError(
            "fork/ does not hold the whole series on a git base; see te-series status, "
            "finish it (te-series apply --continue) or rebuild it (--force)"
        )
    # Submodules do not come with a clone: reuse the source checkout's cutlass headers.
    cutlass = te_src / "3rdparty" / "cutlass"
    if (cutlass / "include").is_dir() and not (fork / "3rdparty/cutlass/include").is_dir():
        shutil.rmtree(fork / "3rdparty" / "cutlass", ignore_errors=True)
        shutil.copytree(cutlass, fork / "3rdparty" / "cutlass", symlinks=True)
    progress(f"TE pipeline: pip install --no-build-isolation -e fork/ ({GIT_BUILD_ENV})")
    run_logged(
        [sys.executable, "-m", "pip", "install", "-v", "--no-build-isolation", "--no-deps"]
        + ["-e", str(fork)],
        what="build TE from fork/",
        env=GIT_BUILD_ENV,
    )


def run(args) -> int:
    series = load_series(args.root)
    series.names()
    if args.baseline and args.te_src:  # it installed the patched fork/ (v28 #5)
        raise SeriesError("--baseline installs the unpatched PyPI release; --te-src builds the "
                          "patched fork/: give one of them")  # fmt: skip
    if args.te_src:
        build_git(args.root, series, args.te_src, args.force)
        print("built fork/ with TE's pipeline (editable)")
        return 0
    if args.baseline:
        py = build_baseline(args.root, series, args.release or series.release)
        print(f"installed unpatched transformer-engine into {py.parent.parent}")
        return 0
    release = args.release or series.release
    version = build_pypi(args.root, series, release, args.wheel)
    print(f"installed transformer-engine {version} into {release_venv(args.root, series, release)}")
    return 0
