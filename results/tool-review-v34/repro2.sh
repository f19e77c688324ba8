#!/bin/bash
# Ctrl-C during `port --edit` while it imports the target release: `export --port` then
# advises `git -C fork-port/R checkout series`, which git refuses (the half-imported
# release's files stand modified in the tree), and export repeats the same advice (loop).
# `status` gives the advice that works (port --edit --force); export does not.
. "$(dirname "$0")/common.sh"
mk_te_src
ts apply --te-src $T/te-src >/dev/null 2>&1
hit=
for delay in 0.05 0.08 0.1 0.12 0.15 0.2 0.03 0.25; do
  rm -rf $T/proj/fork-port $T/proj/.te-series-backup
  ( set -m; cd $T/proj && python3 -m te_series port --edit --release 2.19.0 > $T/out 2>&1 & pid=$!
    while ! grep -q 'importing transformer_engine' $T/out 2>/dev/null; do sleep 0.005; done
    sleep $delay; kill -INT -- -$pid; wait $pid ) 2>/dev/null
  ts export --port 2.19.0 2>&1 | grep -q "on branch 'target'" || continue
  echo "--- export --port after Ctrl-C (delay $delay s after 'importing'):"; ts export --port 2.19.0
  echo "--- following its advice: git -C fork-port/2.19.0 checkout series"
  if ! git -C $T/proj/fork-port/2.19.0 checkout series > $T/co 2>&1; then hit=1; tail -3 $T/co; break; fi
done
[ -n "$hit" ] || { echo "window not hit; rerun"; cleanup; exit 1; }
echo "--- export --port again (same advice):"; ts export --port 2.19.0
echo "--- status (says something else):"; ts status | grep 'fork-port'
cleanup
