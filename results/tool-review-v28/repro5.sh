#!/bin/bash
# Finding 5 (minor): options silently ignored: `build --baseline --te-src PATH` runs the git build
# (pip install -e fork/, the PATCHED tree) instead of the unpatched baseline; `port --edit --out DIR`
# makes fork-port/R/ and writes nothing to DIR, without a word.
# (it runs pip install -e fork/ with the python that runs te-series; PIP_NO_INDEX keeps it offline)
. "$(dirname "$0")/common.sh"
echo "== build --baseline --te-src (first lines)"
(cd "$P" && PIP_NO_INDEX=1 timeout 60 python3 -m te_series build --baseline --te-src "$T/te-src" 2>&1 | head -3 | cut -c1-200)
echo "== port --release 2.19.0 --edit --out $T/port-out"
ts port --release 2.19.0 --edit --out "$T/port-out" 2>&1 | grep -v '^\[te-series'; echo "rc=$?"
ls -d "$T/port-out" 2>&1
