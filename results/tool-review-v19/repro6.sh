#!/bin/bash
# F6: a patches/series that is a symbolic link is replaced by a regular file on export;
# the file it pointed at keeps the old list.
source "$(dirname "$0")/fresh.sh" sy
ts apply --te-src $TE >/dev/null 2>&1
mv patches/series patches/series.real && ln -s series.real patches/series
git add -A patches && git commit -qm "series via a link"
cd fork && echo x >> README.rst && git commit -qam "[Docs] Note

Body.

Signed-off-by: t <t@example.com>" && cd ..
ts export | tail -1
ls -la patches/series patches/series.real; git status --short
grep -c Docs-Note patches/series patches/series.real
