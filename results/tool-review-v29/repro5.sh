#!/bin/bash
# Finding 5 (minor, looping advice): apply --te-src naming a git repository that is not TE
# (here a clone of the te-series project itself) is told to fetch upstream main there; doing so
# succeeds and the same error comes back (for comparison, rebase says only "is not a commit in PATH").
. "$(dirname "$0")/common.sh"
git clone -q /work/tool-try-v29 "$T/other"
echo "== apply --force --te-src other"; ts apply --force --te-src "$T/other"; echo "rc=$?"
git -C "$T/other" fetch origin main; echo "fetch rc=$?"
echo "== again"; ts apply --force --te-src "$T/other"; echo "rc=$?"
echo "== rebase for comparison"; ts rebase --onto $BASE --te-src "$T/other"; echo "rc=$?"
echo "== also minor: an empty --te-src is taken as the project itself"; ts apply --force --te-src ''; echo "rc=$?"
echo "== also minor: --wheel /dev/null 'does not exist'"; ts apply --force --wheel /dev/null; echo "rc=$?"
echo "== also minor: port --out '' writes 2.19.0/ into the project root"; ts port --out ''; echo "rc=$?"; git -C "$P" status --short
echo "(delete $T when done)"
