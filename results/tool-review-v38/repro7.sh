#!/bin/bash
# rebase stops on a conflict; the user runs the wrong verbs
cd "$(dirname "$0")"; source ./common.sh; source ./world-conflict.sh
ts rebase --onto up --te-src $T/te-src 2>&1 | tail -3
echo "=== apply --continue (wrong verb)"; ts apply --continue 2>&1 | tail -5; echo rc=$?
echo "=== apply --continue --skip"; ts apply --continue --skip 2>&1 | tail -5
echo "=== export --dry-run"; ts export --dry-run 2>&1 | tail -3
ts status
cleanup
