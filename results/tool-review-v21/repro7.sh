#!/usr/bin/env bash
# Minor: a patch file an editor saved with a UTF-8 byte-order mark stops apply and check
# with "corrupt mailbox" and no way on (the series file's BOM is accepted).
. "$(dirname "$0")/prelude.sh" r7 >/dev/null
cd "$P"
f=$(ls patches/0003*.patch)
printf '\xef\xbb\xbf' | cat - "$f" > "$W/x" && mv "$W/x" "$f" && git commit -qam "editor saved 0003 with a BOM"
ts apply --te-src "$TE" 2>&1 | grep -v '^\[te-series'
ts status
