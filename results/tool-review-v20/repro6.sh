#!/bin/bash
# Finding 6: bench --rounds 0 (or negative) is an internal error (IndexError).
. "$(dirname "$0")/prelude.sh" 6
ts bench --rounds 0 --baseline-python python3 --patched-python python3; echo "rc=$?"
