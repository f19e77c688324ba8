#!/bin/bash
# A patch file whose first line ("From <sha> <date>") was lost, or an empty patch file:
# apply --force stops with git's words only, no way on (README: every error says how to go on).
. "$(dirname "$0")/common.sh" 7
p=patches/0011-Docs-Add-a-runnable-mixture-of-experts-example-of-ex.patch
sed -i 1d $p
ts apply --force --te-src "$W/te" 2>&1 | grep -v '^\[te-series'; echo "rc=${PIPESTATUS[0]}"
: > $p
ts apply --force --te-src "$W/te" 2>&1 | grep -v '^\[te-series'; echo "rc=${PIPESTATUS[0]}"
