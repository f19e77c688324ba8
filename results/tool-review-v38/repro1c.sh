#!/bin/bash
# a comment added by hand to patches/series (uncommitted) while fork/ has a new, unexported commit
cd "$(dirname "$0")"; source ./common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
sed -i 's/^# pr: contract on fixes$/# My comment about the contract PR.\n# pr: contract on fixes/' patches/series
cd fork; echo "# new" >> transformer_engine/pytorch/ops/__init__.py; git commit -qa -s -m "[PyTorch] New work"; cd ..
echo "=== export"; ts export; echo rc=$?
echo "=== commit, export again (no rebuild)"; git commit -qam "comment"; ts export | grep -v unchanged; echo rc=$?
grep -n "My comment" patches/series
cleanup
