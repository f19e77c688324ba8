#!/bin/bash
# port --out writes 0-byte files for patches that only touch tests/ or docs/ (not in the wheel
# base), and no series; git am of the folder, as the port's own message implies, stops at the first.
cd "$(dirname "$0")"; source ./common.sh
cd $T/proj
ts port --release 2.19.0 --out $T/out 2>&1 | grep -v '^\[te-series'
ls -la $T/out/2.19.0 | awk '{print $5, $9}'
echo "=== git am the ported patches onto 2.19.0 (+#3410), as port --edit builds it"
ts port --release 2.19.0 --edit >/dev/null 2>&1
cd fork-port/2.19.0
PRE=$(git log --format=%H --grep='Reduce Grouped MLP' -1)
git checkout -q -b try $PRE
git am -3 $T/out/2.19.0/*.patch 2>&1 | tail -4
git log --oneline $PRE..HEAD | cat
cleanup
