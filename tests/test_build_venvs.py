"""`build` installs torch once per version and Python and hard-links it into each venv it
makes (.venv, .venv-<release>, the baselines): a second venv costs megabytes, not 5.5 GB.
The layer and the venvs here are small fake distributions, as pip leaves them."""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import threading
import time
import venv
from pathlib import Path

import pytest

from te_series import build
from te_series.util import SeriesError

PYDIR = f"python{sys.version_info.major}.{sys.version_info.minor}"


def fake_dist(site: Path, name: str, files: dict[str, str], version: str = "1.0") -> None:
    """A distribution: its files, and a dist-info whose RECORD lists them (its own files
    first, as a wheel may list them: link_layer must not follow that order)."""
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files = {f"{info}/METADATA": meta, **files, f"{name}/v{version}.py": ""}
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    record = [f"{info}/RECORD", *files, "../../../bin/fake-run"]
    (site / info / "RECORD").write_text("".join(f"{r},,\n" for r in record))


@pytest.fixture
def layer(tmp_path):
    site = tmp_path / "layer" / "lib" / PYDIR / "site-packages"
    fake_dist(
        site,
        "faketorch",
        {
            "faketorch/__init__.py": "x = 1\n",
            "faketorch/cli.py": "def main():\n    print('fake run')\n",
            "faketorch/lib/a.so": "so" * 1000,
            "faketorch-1.0.dist-info/entry_points.txt": "[console_scripts]\n"
            "fake-run = faketorch.cli:main\n",
        },
    )
    fake_dist(site, "pip", {"pip/__init__.py": "layer's pip\n"})
    return site


@pytest.fixture
def py(tmp_path):
    venv.create(tmp_path / "venv", with_pip=False)
    return tmp_path / "venv" / "bin" / "python"


def test_a_venv_gets_the_layers_files_as_links_and_its_scripts(layer, py):
    build.link_layer(layer, py)
    target = build.purelib(py)
    for rel in ["faketorch/__init__.py", "faketorch/lib/a.so", "faketorch-1.0.dist-info/RECORD"]:
        assert os.path.samefile(layer / rel, target / rel), rel
    assert not list(target.rglob("*te-series-tmp*"))
    out = subprocess.run([py.parent / "fake-run"], capture_output=True, text=True, check=True)
    assert out.stdout == "fake run\n"


def test_a_distribution_the_venv_has_is_left_to_it(layer, py):
    target = build.purelib(py)
    fake_dist(target, "pip", {"pip/__init__.py": "venv's own pip\n"}, version="2.0")
    build.link_layer(layer, py)
    assert [p.name for p in target.glob("pip-*")] == ["pip-2.0.dist-info"]
    assert not (target / "pip" / "v1.0.py").exists()
    assert (target / "faketorch" / "__init__.py").exists()


def test_a_broken_dist_info_in_the_venv_is_replaced(layer, py):
    target = build.purelib(py)
    (target / "faketorch-1.0.dist-info").mkdir()  # no METADATA, so no name
    (target / "faketorch-1.0.dist-info" / "INSTALLER").write_text("pip\n")
    build.link_layer(layer, py)
    assert (target / "faketorch-1.0.dist-info" / "METADATA").exists()


def test_a_file_in_the_way_is_replaced_never_written_into(layer, py, tmp_path):
    """A file at a linked path may itself be a link (to another layer's file): writing into it
    would change that one too."""
    other = tmp_path / "another-layers-file"
    other.write_text("other\n")
    target = build.purelib(py)
    (target / "faketorch").mkdir()
    os.link(other, target / "faketorch" / "__init__.py")
    build.link_layer(layer, py)
    assert other.read_text() == "other\n"
    assert os.path.samefile(layer / "faketorch/__init__.py", target / "faketorch/__init__.py")


def test_a_venv_of_another_python_is_left_to_its_pip(layer, py, monkeypatch):
    other = py.parents[1] / "lib" / "python3.99" / "site-packages"
    monkeypatch.setattr(build, "purelib", lambda _: other)
    build.link_layer(layer, py)
    assert not other.exists()


def cross_device(src, dst):
    raise OSError(errno.EXDEV, "Invalid cross-device link")


def test_another_file_system_gets_copies_and_says_so(layer, py, monkeypatch, capsys):
    monkeypatch.setattr(build.os, "link", cross_device)
    build.link_layer(layer, py)
    copy = build.purelib(py) / "faketorch" / "lib" / "a.so"
    assert copy.read_text() == "so" * 1000
    assert not os.path.samefile(layer / "faketorch/lib/a.so", copy)
    assert "different file systems: torch was copied" in capsys.readouterr().err


@pytest.mark.parametrize("stop_at", ["a.so", "METADATA"])
def test_an_interrupted_link_hides_the_distribution_until_a_rerun_finishes(
    layer, py, monkeypatch, stop_at
):
    real = build.place

    def stop(src, dst, layer_):
        if src.name == stop_at and "faketorch" in str(src):
            raise KeyboardInterrupt
        return real(src, dst, layer_)

    monkeypatch.setattr(build, "place", stop)
    with pytest.raises(KeyboardInterrupt):
        build.link_layer(layer, py)
    target = build.purelib(py)
    assert not list(target.glob("faketorch-*.dist-info"))  # pip would see a part of one
    monkeypatch.setattr(build, "place", real)
    build.link_layer(layer, py)
    assert (target / "faketorch" / "lib" / "a.so").read_text() == "so" * 1000
    assert sorted(p.name for p in (target / "faketorch-1.0.dist-info").iterdir()) == [
        "METADATA",
        "RECORD",
        "entry_points.txt",
    ]
    assert not list(target.rglob("*te-series-tmp*"))


def test_an_interrupted_copy_is_never_taken_for_the_file(layer, py, monkeypatch):
    monkeypatch.setattr(build.os, "link", cross_device)

    def half_a_copy(src, dst):
        Path(dst).write_text(Path(src).read_text()[:10])
        raise KeyboardInterrupt

    monkeypatch.setattr(build.shutil, "copy2", half_a_copy)
    with pytest.raises(KeyboardInterrupt):
        build.link_layer(layer, py)
    monkeypatch.undo()
    build.link_layer(layer, py)
    target = build.purelib(py)
    for rel in ["faketorch/__init__.py", "faketorch/lib/a.so", "faketorch-1.0.dist-info/RECORD"]:
        assert (target / rel).read_text() == (layer / rel).read_text(), rel


@pytest.mark.parametrize("loss", ["a file", "a RECORD"])
def test_a_damaged_layer_is_named_with_its_removal(layer, py, loss):
    if loss == "a file":
        (layer / "faketorch" / "lib" / "a.so").unlink()
    else:
        (layer / "faketorch-1.0.dist-info" / "RECORD").unlink()
    with pytest.raises(SeriesError, match=rf"rm -r {layer.parents[2]}\) and rerun the build"):
        build.link_layer(layer, py)


@pytest.fixture
def fake_installs(tmp_path, monkeypatch):
    """torch_layer with venv creation and pip faked: pip leaves a file, the list of installs."""
    monkeypatch.setenv("TE_SERIES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "venv_python", lambda root, path: path / "bin" / "python")
    installs = []

    def pip(py, *args, what):
        installs.append(args)
        py.parents[1].mkdir(parents=True, exist_ok=True)
        (py.parents[1] / "partial").write_text("")
        if len(installs) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(build, "pip", pip)
    return installs


def test_an_interrupted_layer_install_starts_over(tmp_path, fake_installs):
    with pytest.raises(KeyboardInterrupt):
        build.torch_layer(tmp_path, "2.14.1")
    layer = tmp_path / "cache" / f"torch-2.14.1-{sys.implementation.cache_tag}"
    assert (layer / "partial").exists()
    (layer / "stale").write_text("")
    site = layer / "lib" / PYDIR / "site-packages"
    assert build.torch_layer(tmp_path, "2.14.1") == site
    assert not (layer / "stale").exists()  # the half layer went before the second install
    assert len(fake_installs) == 2
    assert build.torch_layer(tmp_path, "2.14.1") == site  # its python is not run (there is none)
    assert len(fake_installs) == 2  # a complete layer is kept


def test_a_second_build_waits_for_the_first_ones_layer(tmp_path, fake_installs, monkeypatch):
    fake_installs.append("the interrupted one, done")  # this layer installs at once
    layer = tmp_path / "cache" / f"torch-2.14.1-{sys.implementation.cache_tag}"
    layer.parent.mkdir(parents=True)
    waiting = threading.Event()
    monkeypatch.setattr(
        build, "progress", lambda msg: "waiting for another" in msg and waiting.set()
    )
    with open(f"{layer}.lock", "w", encoding="utf-8") as first:
        fcntl.flock(first, fcntl.LOCK_EX)
        second = threading.Thread(target=build.torch_layer, args=(tmp_path, "2.14.1"))
        second.start()
        assert waiting.wait(30), "the second build did not wait for the lock"
        time.sleep(0.2)
        assert second.is_alive() and len(fake_installs) == 1  # it waits, installing nothing
    second.join(30)
    assert len(fake_installs) == 2 and (layer / "te-series-complete").exists()


def test_the_extension_wheel_is_built_and_cached_per_torch(tmp_path, monkeypatch):
    """A transformer_engine_torch wheel links against the torch it was built with: a wheel
    cached for one torch is never installed with another."""
    monkeypatch.setenv("TE_SERIES_CACHE", str(tmp_path / "cache"))
    builds = []

    def pip(py, *args, what, env=None):
        out = Path(args[args.index("-w") + 1])
        builds.append(out.name)
        (out / "transformer_engine_torch-2.20.2-cp311-cp311-linux_x86_64.whl").write_text("")

    monkeypatch.setattr(build, "pip", pip)
    old = build.ext_wheel(tmp_path / "py", "2.20.2", "2.14.1")
    new = build.ext_wheel(tmp_path / "py", "2.20.2", "2.15.0")
    assert builds == ["torch-2.14.1", "torch-2.15.0"] and old != new
    assert build.ext_wheel(tmp_path / "py", "2.20.2", "2.15.0") == new  # cached
    assert len(builds) == 2


def base_series(tmp_path, port: str):
    from te_series.series import Series

    (tmp_path / "patches").mkdir(exist_ok=True)
    (tmp_path / "patches" / "base.toml").write_text(
        '[pypi]\nrelease = "2.20.2"\ntorch = "2.15.0"\n\n[port]\ntargets = ["2.19.0"]\n' + port
    )
    return Series(tmp_path / "patches", tmp_path)


def test_each_release_builds_on_the_torch_base_toml_gives_it(tmp_path):
    series = base_series(tmp_path, 'torch = "2.14.1"\n')
    assert build.torch_version(series, "2.20.2") == "2.15.0"
    assert build.torch_version(series, "2.19.0") == "2.14.1"
    series = base_series(tmp_path, "")
    with pytest.raises(SeriesError, match=r"lacks `torch` in \[port\]"):
        build.torch_version(series, "2.19.0")


def test_a_pip_constraint_that_excludes_the_torch_is_named(tmp_path, monkeypatch):
    """This workplace's machines cap torch in pip's configuration (/etc/xdg/pip); pip then
    refuses torch==2.15.0, and the build says how to lift the cap."""
    monkeypatch.setattr(build, "torch_layer", lambda root, torch: tmp_path)
    monkeypatch.setattr(build, "link_layer", lambda site, py: None)
    refusal = (
        "check torch==2.15.0 failed (exit 1); full log: /tmp/x.log\n"
        "    The user requested torch==2.15.0\n"
        "    The user requested (constraint) torch<=2.14.1\n"
        "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/..."
    )

    def pip(py, *args, what, env=None):
        raise SeriesError(refusal)

    monkeypatch.setattr(build, "pip", pip)
    with pytest.raises(SeriesError, match=r"PIP_CONSTRAINT=/dev/null \./te-series build") as err:
        build.install_stack(tmp_path, tmp_path / "py", None, "2.15.0")
    assert "(constraint) torch<=2.14.1" in str(err.value)  # pip's own words, kept
