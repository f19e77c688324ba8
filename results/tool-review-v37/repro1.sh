#!/bin/bash
# export; a new commit; export again (patches/ not committed in between) -> refused,
# with advice that says the series edits "are not in fork/" and to rebuild fork/ (which
# moves the new, unexported commit B out of fork/ into the backup).
T=/tmp/try37-repro1-$$
source "$(dirname "$0")/common.sh" >/dev/null 2>&1
ts apply --te-src $T/te-src >/dev/null 2>&1
cd $T/proj/fork
echo a > docs/a.txt; git add -A; git commit -qsm "[PyTorch] A"
ts export >/dev/null && echo "first export ok"
echo b > docs/b.txt; git add -A; git commit -qsm "[PyTorch] B"
ts export; echo "rc=$?"
echo "--- follow the advice: commit, then rebuild"
(cd $T/proj && git add patches/series && git commit -qm s)
ts apply --force --te-src $T/te-src 2>&1 | grep -o 'kept: fork/ moved whole[^;]*'
ts export | tail -2
echo "fork/ now:"; git -C $T/proj/fork log --oneline -2
echo "B is not exported; it is only in the backup:"; ls $T/proj/patches | grep -c PyTorch-B
cleanup
