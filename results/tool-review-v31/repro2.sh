#!/bin/bash
# Minor: range-diff --out is not checked first; an uncreatable path fails after all the work,
# as an OS error with advice about free space / permissions.
. "$(dirname "$0")/common.sh"
ts me range-diff HEAD --te-src "$T/te-src" --out /proc/te-series-out 2>&1 | tail -1 || true
