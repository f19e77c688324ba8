#!/bin/bash
# minor: `apply --wheel` of another release (2.19.0) is taken as base.toml's release: the base
# commit says "transformer_engine 2.20.2 from PyPI" over 2.19.0's files, and status says only
# "pypi base". (By the code, `build --wheel W` would likewise install W's files labelled
# 2.20.2+series.N; not run here, it needs torch.)
. "$(dirname "$0")/common.sh"
ts apply --wheel $T/cache/dist/transformer_engine-2.19.0-py3-none-any.whl 2>&1 | grep -v '^not in'
git -C $T/proj/fork log --format='%h %s' | tail -2
unzip -l $T/cache/dist/transformer_engine-2.19.0-py3-none-any.whl | grep -i 'dist-info/METADATA'
ts status | head -2
cleanup
