#!/bin/bash
# R7: a mode-only change (chmod +x) of a file under transformer_engine/ makes the PyPI base
# refuse the series: "the series creates it, but the tree has <blob>" (a diff without an
# index line is read as a new file). apply, check and build on the wheel all stop there.
. "$(dirname "$0")/prelude.sh"
ts apply --te-src $TE >/dev/null 2>&1 || echo apply failed
chmod +x fork/transformer_engine/pytorch/ops/linear.py
git -C fork commit -q -a -s -m "[PyTorch] Make linear.py executable" -m "A mode change only."
ts export | grep -v unchanged; git add -A patches; git commit -qm "mode patch"
ts apply --force 2>&1 | grep -v '^\[te'
