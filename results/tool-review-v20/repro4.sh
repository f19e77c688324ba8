#!/bin/bash
# Finding 4: a cached wheel with one member failing its CRC: apply says "is not a wheel (not
# a zip file)" and nothing else, every run (the cache is never refreshed and the file is not
# named as the cache's); on a git base the prerequisite step says the wheel "lacks" fuser.py
# and that most likely base.toml's `release` is wrong.
. "$(dirname "$0")/prelude.sh" 4
python3 - "$TE_SERIES_CACHE/dist/transformer_engine-2.20.2-py3-none-any.whl" <<'PY'
import io, sys, zipfile
p = sys.argv[1]; orig = open(p, 'rb').read(); name = 'transformer_engine/pytorch/ops/fuser.py'
i = zipfile.ZipFile(p).getinfo(name); start = i.header_offset + 30 + len(i.filename) + len(i.extra)
for off in range(start + 100, start + i.compress_size):      # one flipped bit that only the CRC sees
    for bit in (1, 2, 4, 8, 16, 32, 64, 128):
        d = bytearray(orig); d[off] ^= bit
        try: zipfile.ZipFile(io.BytesIO(bytes(d))).read(name)
        except zipfile.BadZipFile as e:
            open(p, 'wb').write(d); print("damaged:", e); raise SystemExit
        except Exception: pass
PY
for i in 1 2; do ts apply; echo "rc=$?"; done
ts apply --te-src "$W/te"; echo "rc=$?"
