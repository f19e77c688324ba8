#!/bin/bash
# R10 (minor): fork.new/ left without a record (apply --force killed while cloning; made here by
# hand): status and `apply --continue` give no way on.
. "$(dirname "$0")/prelude.sh"
ts apply --te-src $TE >/dev/null 2>&1 || echo apply failed
git clone -q --no-checkout $TE fork.new      # what a SIGKILL during apply --force's clone leaves
ts status | tail -1
ts apply --continue
# (a timing version: timeout -s KILL 0.3 ... apply --force --te-src $TE, in a loop of delays)
