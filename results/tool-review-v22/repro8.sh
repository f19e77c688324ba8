#!/bin/bash
# R8: internal errors for a closed stdout (after the verb did its work) and for a bench
# python that prints no JSON.
. "$(dirname "$0")/prelude.sh"
ts apply --te-src $TE >/dev/null 2>&1 || echo apply failed
ts status >&-; echo "rc=$?"
ts export >&-; echo "rc=$?"
ts bench --baseline-python /bin/true --patched-python /bin/true --rounds 1 --steps 1; echo "rc=$?"
ts bench --baseline-python /bin/echo --patched-python /bin/echo --rounds 1 --steps 1; echo "rc=$?"
