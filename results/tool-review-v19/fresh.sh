# source fresh.sh NAME: a fresh clone of the project at $W/NAME (W=/tmp/h32w), with a
# user identity, and `ts` = the tool from that clone (PATH has a venv with black 24.4.2,
# pylint 3.3.1, vermin 1.8.0). TE: $TE = a clone of the read-only TE mirror (base d0067d0da)
# with branch newmain = base + "Upstream doc tweak" (README.rst).
W=${W:-/tmp/h32w}; PROJECT=${PROJECT:-/work/h32}; TE=${TE:-/tmp/h32te}
if [ ! -d "$TE" ]; then
  git clone -q /work/.mirror/NVIDIA+TransformerEngine/repo "$TE"
  git -C "$TE" config user.name t; git -C "$TE" config user.email t@example.invalid
  git -C "$TE" checkout -q -b newmain && echo tweak >> "$TE/README.rst" &&
    git -C "$TE" commit -qam "Upstream doc tweak" && git -C "$TE" checkout -q main
fi
if ! git -C "$TE" rev-parse -q --verify main3410 >/dev/null; then  # base + #3410's fuser.py (for pr)
  git -C "$TE" checkout -q -b main3410 main
  python3 -c "import zipfile,sys; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read('transformer_engine/pytorch/ops/fuser.py'))" \
    ~/.cache/te-series/dist/transformer_engine-2.20.2-py3-none-any.whl > "$TE/transformer_engine/pytorch/ops/fuser.py"
  git -C "$TE" commit -qam "Reduce Grouped MLP Fuser CPU Overhead (#3410)" && git -C "$TE" checkout -q main
fi
mkdir -p "$W"; rm -rf "$W/$1"; git clone -q "$PROJECT" "$W/$1"; cd "$W/$1"
git config user.name t; git config user.email t@example.invalid
export TE_SERIES_CACHE=$W/cache PATH=${VENV:-/tmp/h32venv}/bin:$PATH
mkdir -p $TE_SERIES_CACHE/dist; cp -n ~/.cache/te-series/dist/*.whl $TE_SERIES_CACHE/dist/ 2>/dev/null
ts() { PYTHONPATH=$PWD/src python3 -m te_series "$@"; }
