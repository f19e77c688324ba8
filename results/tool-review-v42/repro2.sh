#!/bin/bash
# export --dry-run prints no plan when the only refusal is "patches/series (its list of
# patches) changed since" (a colleague's rename pulled), though README says it shows the plan.
source "$(dirname "$0")/common.sh"
trap cleanup EXIT
ts apply --te-src $T/te-src >/dev/null 2>&1
git clone -q $T/proj $T/col
tc() { (cd $T/col && python3 -m te_series "$@"); }
tc apply --te-src $T/te-src >/dev/null 2>&1
at_commit $T/col/fork "Do not lock" "GIT_EDITOR=\"sed -i 1s/Do.not.lock/Never-lock/\" git commit -q --amend"
tc export >/dev/null 2>&1; (cd $T/col && git add -A patches && git commit -qm "reword 0003")
cd $T/proj && git pull -q --no-rebase $T/col HEAD
echo "== dry-run (no plan)"; ts export --dry-run 2>&1; echo rc=$?
