#!/bin/bash
# Finding 3: a cached wheel whose compressed data is damaged (a bad disk block, a partial
# overwrite; the zip directory is intact, so the "whole zip file" test passes) makes apply
# report an internal error ("This is a bug in te-series"), on the PyPI base and, through
# the upstream prerequisite, on a git base too. Re-running repeats it.
. "$(dirname "$0")/prelude.sh" 3
python3 - "$TE_SERIES_CACHE/dist/transformer_engine-2.20.2-py3-none-any.whl" <<'PY'
import sys, zipfile
p = sys.argv[1]; i = zipfile.ZipFile(p).getinfo('transformer_engine/pytorch/ops/fuser.py')
d = bytearray(open(p, 'rb').read())
off = i.header_offset + 30 + len(i.filename) + len(i.extra) + i.compress_size // 2
for k in range(8): d[off + k] ^= 0xff
open(p, 'wb').write(d); print("is_zipfile:", zipfile.is_zipfile(p))
PY
ts apply; echo "rc=$?"
ts apply --te-src "$W/te"; echo "rc=$?"
TE_SERIES_DEBUG=1 ts apply 2>&1 | tail -1
