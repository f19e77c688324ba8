"""`build` installs torch once per version and hard-links it into each venv it makes (.venv,
.venv-<release>, the baselines), so that a second venv costs megabytes, not 5.5 GB of disk."""

from __future__ import annotations

import errno
import os
import venv
from pathlib import Path

import pytest

from te_series import build


def fake_dist(site: Path, name: str, files: dict[str, str], version: str = "1.0") -> None:
    """A distribution as pip leaves it: its files, and a dist-info whose RECORD lists them."""
    info = f"{name}-{version}.dist-info"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    files = {**files, f"{info}/METADATA": meta, f"{name}/v{version}.py": ""}
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    # the dist-info first, as a wheel may list it: link_layer must not follow that order
    record = [f"{info}/RECORD", *reversed(files), "../../../bin/fake-script"]
    (site / info / "RECORD").write_text("".join(f"{r},,\n" for r in record))


@pytest.fixture
def layer(tmp_path):
    site = tmp_path / "layer"
    fake_dist(site, "faketorch", {"faketorch/__init__.py": "x = 1\n", "faketorch/lib/a.so": "so"})
    fake_dist(site, "pip", {"pip/__init__.py": "layer's pip\n"})
    return site


@pytest.fixture
def py(tmp_path):
    venv.create(tmp_path / "venv", with_pip=False)
    return tmp_path / "venv" / "bin" / "python"


def test_a_venv_gets_the_layers_files_as_links(layer, py):
    build.link_layer(layer, py)
    target = build.purelib(py)
    for rel in ["faketorch/__init__.py", "faketorch/lib/a.so", "faketorch-1.0.dist-info/RECORD"]:
        assert os.path.samefile(layer / rel, target / rel), rel
    assert not (target.parents[2] / "bin" / "fake-script").exists()


def test_a_distribution_the_venv_has_is_left_to_it(layer, py):
    target = build.purelib(py)
    fake_dist(target, "pip", {"pip/__init__.py": "venv's own pip\n"}, version="2.0")
    build.link_layer(layer, py)
    assert [p.name for p in target.glob("pip-*")] == ["pip-2.0.dist-info"]
    assert not (target / "pip" / "v1.0.py").exists()
    assert (target / "faketorch" / "__init__.py").exists()


def test_another_file_system_gets_copies(layer, py, monkeypatch):
    def cross_device(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(build.os, "link", cross_device)
    build.link_layer(layer, py)
    copy = build.purelib(py) / "faketorch" / "lib" / "a.so"
    assert copy.read_text() == "so" and not os.path.samefile(layer / "faketorch/lib/a.so", copy)


def test_an_interrupted_link_hides_the_distribution_until_a_rerun_finishes(layer, py, monkeypatch):
    real = build.link_file

    def stop_at_the_library(src, dst):
        if src.name == "a.so":
            raise KeyboardInterrupt
        real(src, dst)

    monkeypatch.setattr(build, "link_file", stop_at_the_library)
    with pytest.raises(KeyboardInterrupt):
        build.link_layer(layer, py)
    target = build.purelib(py)
    assert not list(target.glob("faketorch-*.dist-info"))  # pip would see a half package
    monkeypatch.setattr(build, "link_file", real)
    build.link_layer(layer, py)  # the files linked before the stop are taken as they are
    assert (target / "faketorch" / "lib" / "a.so").read_text() == "so"
    assert (target / "faketorch-1.0.dist-info" / "RECORD").exists()


def test_an_interrupted_layer_install_starts_over(tmp_path, monkeypatch):
    monkeypatch.setenv("TE_SERIES_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(build, "venv_python", lambda root, path: fake_venv(path))
    installs = []

    def pip(py, *args, what):
        installs.append(args)
        (py.parent / "partial").write_text("")
        if len(installs) == 1:
            raise KeyboardInterrupt

    monkeypatch.setattr(build, "pip", pip)
    monkeypatch.setattr(build, "purelib", lambda py: py.parent / "site")
    with pytest.raises(KeyboardInterrupt):
        build.torch_layer(tmp_path, "2.14.1")
    layer = tmp_path / "cache" / "torch-2.14.1"
    assert (layer / "partial").exists()
    (layer / "stale").write_text("")
    assert build.torch_layer(tmp_path, "2.14.1") == layer / "site"
    assert not (layer / "stale").exists()  # the half layer went before the second install
    assert len(installs) == 2
    assert build.torch_layer(tmp_path, "2.14.1") == layer / "site"
    assert len(installs) == 2  # a complete layer is kept


def fake_venv(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path / "python"
