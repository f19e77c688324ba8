#!/usr/bin/env bash
# Make the git-ignored GPU kit (.gpukit/, ~29 MB) that gpu/h200.sh carries to the device machine.
#
#     bash gpu/kit.sh TE_MIRROR CUTLASS_MIRROR      # e.g. the two git dirs that `fetch` gives
#
# base.tar.xz: TransformerEngine/ shallow at the base commit (base.toml's git base), with
# cutlass's include/ and tools/util/include/ at TE's pinned submodule commit in 3rdparty/cutlass;
# wheels/: pydantic (+ pydantic-core, annotated-types, typing-inspection, typing_extensions) and
# nvidia-cudnn-frontend for CPython 3.12 on x86_64 (the device's image lacks them);
# te-series-cache/dist/: TE 2.20.2's py wheel (the #3410 prerequisite's fuser.py);
# gpu-baseline-failed.txt (known base failures of test_fusible_ops.py, from ../shared when there);
# project.bundle: HEAD of this repository.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
TE=${1:?TE git mirror}
CUTLASS=${2:?cutlass git mirror}
BASE=${KIT_BASE:-d0067d0da}
KIT=$REPO/.gpukit
mkdir -p "$KIT/wheels" "$KIT/te-series-cache/dist"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

full=$(git -C "$TE" rev-parse "$BASE^{commit}")
git init -q "$work/TransformerEngine"
git -C "$work/TransformerEngine" -c protocol.file.allow=always fetch -q --depth 1 "file://$TE" "$full"
git -C "$work/TransformerEngine" checkout -q FETCH_HEAD
pin=$(git -C "$work/TransformerEngine" ls-tree HEAD 3rdparty/cutlass | awk '{print $3}')
mkdir -p "$work/TransformerEngine/3rdparty/cutlass"
git -C "$CUTLASS" archive "$pin" include tools/util/include | tar -x -C "$work/TransformerEngine/3rdparty/cutlass"
tar -cJf "$KIT/base.tar.xz" -C "$work" TransformerEngine
echo "base.tar.xz: TE $full, cutlass $pin"

pip download -q --only-binary=:all: --no-deps --python-version 3.12 --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
  -d "$KIT/wheels" pydantic pydantic-core annotated-types typing-inspection typing_extensions \
  nvidia-cudnn-frontend
pip download -q --no-deps --only-binary=:all: -d "$KIT/te-series-cache/dist" transformer_engine==2.20.2
# pydantic pins pydantic-core exactly: say if the newest of each disagree
unzip -p "$KIT"/wheels/pydantic-[0-9]*.whl '*/METADATA' | grep -i "^Requires-Dist: pydantic-core" || true
ls "$KIT"/wheels

[ -f "$REPO/../shared/gpu-baseline-failed.txt" ] && cp "$REPO/../shared/gpu-baseline-failed.txt" "$KIT/"
git -C "$REPO" bundle create "$KIT/project.bundle" HEAD
du -sh "$KIT"
