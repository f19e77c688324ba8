#!/bin/bash
# port --out DIR where DIR/<release> is a file: a raw OS error, with advice (free space or a
# permission; run again) that cannot get past it.
source /work/tool-review-v32/common.sh
mkdir -p $T/out && echo "my notes" > $T/out/2.19.0
ts port --out $T/out; echo "rc=$?"
echo "== following the advice: run the command again"
ts port --out $T/out; echo "rc=$?"
cleanup
