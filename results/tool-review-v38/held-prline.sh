#!/bin/bash
# a '# pr:' group merged away by hand (committed) while fork/ has an unexported commit; export
cd "$(dirname "$0")"; source ./common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
sed -i '/^# pr: standalone-lock on fixes$/d; s/^# pr: in-place on standalone-lock$/# pr: in-place on fixes/' patches/series
git rm -q patches/pr/standalone-lock.md
sed -i 's/^# pr: moe-example on fixes$/# pr: moe-example on fixes\n# a new comment/' patches/series
git commit -qam "merge standalone-lock into fixes by hand"
cd fork; echo "# new" >> transformer_engine/pytorch/ops/__init__.py; git commit -qa -s -m "[PyTorch] New work"; cd ..
echo "=== export"; ts export | grep -v unchanged; echo rc=$?
git diff patches/series

cleanup
