#!/bin/bash
# fork/ has an unexported commit; apply --force stops on a broken patch in fork.new/; user tries export
cd "$(dirname "$0")"; source ./common.sh
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj
cd fork; echo "# new" >> transformer_engine/pytorch/ops/__init__.py; git commit -qa -s -m "[PyTorch] New work"; cd ..
P=patches/0005-PyTorch-Keep-in-place-producers-from-writing-into-ch.patch
sed -i 's/^-        elif self._in_place:$/-        elif self._in_place:  # BROKEN/' $P; git commit -qam broken
ts apply --force --te-src $T/te-src 2>&1 | grep -v '^\[te-series' | tail -3
echo "=== export (old fork/ holds unexported work)"; ts export 2>&1; echo rc=$?
echo "=== export --dry-run"; ts export --dry-run 2>&1 | tail -4
cleanup
