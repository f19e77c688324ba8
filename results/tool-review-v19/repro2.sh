#!/bin/bash
# F2: a damaged wheel in the cache (a download cut short: here truncated by hand) is
# reported as a wrong `release` in base.toml, or as "not a wheel" with no way on.
source "$(dirname "$0")/fresh.sh" w1
C=$W/cache2; rm -rf $C; mkdir -p $C/dist
head -c 100000 ~/.cache/te-series/dist/transformer_engine-2.20.2-py3-none-any.whl > $C/dist/transformer_engine-2.20.2-py3-none-any.whl
# a TE checkout that lacks #3410's post-image blob (no local-clone object sharing)
rm -rf $W/te_main; git clone -q --single-branch -b main file://$TE $W/te_main
echo "== git base (prerequisite from the cached wheel)"
TE_SERIES_CACHE=$C ts apply --te-src $W/te_main 2>&1 | grep -v "^\["; echo rc=${PIPESTATUS[0]}
echo "== PyPI base"
TE_SERIES_CACHE=$C ts apply 2>&1 | grep -v "^\["; echo rc=${PIPESTATUS[0]}
echo "== and again (nothing said how to get past it)"
TE_SERIES_CACHE=$C ts apply 2>&1 | grep -v "^\["; echo rc=${PIPESTATUS[0]}
