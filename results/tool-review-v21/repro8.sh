#!/usr/bin/env bash
# Minor: status says "complete" where export refuses (a squash of two patches; a series
# line removed by hand).
. "$(dirname "$0")/prelude.sh" r8 >/dev/null
cd "$P"
ts apply --te-src "$TE" >/dev/null 2>&1
( cd fork && GIT_SEQUENCE_EDITOR="sed -i '2s/^pick/squash/'" GIT_EDITOR=true git rebase -q -i HEAD~2 >/dev/null )
ts status | head -1
ts export 2>&1 | cut -c1-160
# a series line removed by hand (committed), fork/ not rebuilt
. "$(dirname "$0")/prelude.sh" r8b >/dev/null
cd "$P"; ts apply --te-src "$TE" >/dev/null 2>&1
sed -i '/^0006-/d' patches/series && git commit -qam "take 0006 out of the list"
ts status | head -1
ts export 2>&1 | head -2 | cut -c1-160
