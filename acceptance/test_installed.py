"""The installed TE really is the patched build of this checkout's series."""

import tempfile
from importlib.metadata import version
from pathlib import Path

import transformer_engine

from te_series.git import blob_id, git
from te_series.series import load_series, read_patch

ROOT = Path(__file__).resolve().parents[1]
SERIES = load_series(ROOT)
PUBLIC, _, LOCAL = version("transformer-engine").partition("+")


def test_version_carries_series_label():
    assert LOCAL == f"series.{len(SERIES.names())}"
    assert PUBLIC in [SERIES.release, *SERIES.port_targets]


def final_postimages(patches) -> dict[str, str | None]:
    """For each file the series touches, the blob id it has after the whole series."""
    return {f.path: f.new_blob for p in patches for f in p.files}


def expected_blobs() -> dict[str, str]:
    """Blob id of every package file the series touches, after the series."""
    touched = final_postimages([read_patch(p) for p in SERIES.paths()])
    touched = {p: b for p, b in touched.items() if p.startswith("transformer_engine/")}
    if PUBLIC == SERIES.release:
        return touched
    # A port: the 3-way merge result on the target release's files.
    from te_series.port import port_tree

    with tempfile.TemporaryDirectory() as tmp:
        tree = port_tree(SERIES, PUBLIC, Path(tmp) / "tree")
        return {p: git("rev-parse", f"HEAD:{p}", cwd=tree).strip() for p in touched}


def test_installed_files_are_the_series_postimages():
    site = Path(transformer_engine.__file__).resolve().parent.parent
    expected = expected_blobs()
    assert expected, "the series touches no package file"
    for path, blob in expected.items():
        assert blob, f"{path}: the series deletes it"
        assert blob_id((site / path).read_bytes()).startswith(blob), path
