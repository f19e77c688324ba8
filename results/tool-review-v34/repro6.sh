#!/bin/bash
# minor: Ctrl-C during `pr` ends with "patches/ was not written." - pr never writes patches/;
# what the user needs to know is whether pr-out/ was written.
. "$(dirname "$0")/common.sh"
mk_te_src; mk_fakemain
( set -m; cd $T/proj && python3 -m te_series pr --te-src $T/te-src > $T/out 2>&1 & pid=$!
  sleep 1.0; kill -INT -- -$pid; wait $pid ) 2>/dev/null
grep -v '^\[te-series' $T/out
cleanup
