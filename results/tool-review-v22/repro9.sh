#!/bin/bash
# R9: range-diff of a revision whose base.toml is missing or wrong names the working tree's
# patches/base.toml and says to restore it (git checkout -- patches/base.toml): that changes
# nothing, and the same error comes back.
. "$(dirname "$0")/prelude.sh"
git rm -q patches/base.toml && git commit -qm "no base.toml" && git tag nobase && git revert --no-edit HEAD >/dev/null
ts range-diff nobase --te-src $TE 2>&1 | grep -v '^\[te'
git checkout -- patches/base.toml
ts range-diff nobase --te-src $TE 2>&1 | grep -v '^\[te'
sed -i 's/^release = "2.20.2"$/release = "2.20.2 "/' patches/base.toml; git commit -qam "bad release" && git tag badrel && git revert --no-edit HEAD >/dev/null
ts range-diff badrel 2>&1 | grep -v '^\[te'
