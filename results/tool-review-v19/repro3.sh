#!/bin/bash
# F3: a user-level black configuration (~/.config/black, here via XDG_CONFIG_HOME) changes
# what `check` reports on the default PyPI base: 12 "black would reformat" problems for an
# unchanged series that checks ok without it (and ok with it on a git base).
source "$(dirname "$0")/fresh.sh" bl
mkdir -p $W/xdg && printf '[tool.black]\nskip-magic-trailing-comma = true\n' > $W/xdg/black
echo "== check (PyPI base), no user black config"; ts check 2>&1 | grep -v '^\[' | tail -1
echo "== check (PyPI base), with the user's black config"
XDG_CONFIG_HOME=$W/xdg ts check 2>&1 | grep -E '^! |^check:' | cut -c1-140
echo "== check --te-src (git base), with the user's black config"
XDG_CONFIG_HOME=$W/xdg ts check --te-src $TE 2>&1 | grep -E '^! |^check:' | cut -c1-140
