#!/bin/bash
# minor: TE_SERIES_CACHE naming a file (not a folder): the error is the raw OS text
# "File exists: PATH" with advice about free space or permissions, and "run the command again",
# which fails the same way; it should say the cache path is not a folder.
. "$(dirname "$0")/common.sh"
touch $T/cachefile
(cd $T/proj && TE_SERIES_CACHE=$T/cachefile python3 -m te_series apply); echo rc=$?
(cd $T/proj && TE_SERIES_CACHE=$T/cachefile python3 -m te_series apply); echo rc=$?
cleanup
