#!/bin/bash
# Usage: ./run_all.sh <tree> [<tree> ...]   e.g. ./run_all.sh /tmp/rgtree /tmp/rgbase
# Trees: PR = main + 0001,0002,0006,0007; base = main + 0001,0002,0006.
cd "$(dirname "$0")"
for t in "$@"; do
  for p in p0[1-7]_*.py; do
    echo "=== $p on $t"
    PYTHONPATH="$t:." /work/main/.venv/bin/python "$p" 2>&1 | grep -E "^\[|^tree|^   |us/step"
  done
done
