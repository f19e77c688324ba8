#!/usr/bin/env bash
# Finding 2: a te-series killed (SIGKILL, OOM) during rebase --onto's prerequisite step
# leaves its scratch worktree registered in fork/; apply --force then refuses, and the
# command it gives fails.
. "$(dirname "$0")/prelude.sh" r2 >/dev/null
cd "$P"
ts apply --te-src "$TE" >/dev/null 2>&1
( cd "$TE" && git checkout -q -b nx d0067d0da6cb01811b8072a7d304f0e00344ce2b && echo >> README.rst &&
  git -c user.name=U -c user.email=u@x.io commit -qam "upstream readme" )
# a git that is slow at read-tree, so that the kill lands inside carry_prerequisites
mkdir -p "$W/bin"
cat > "$W/bin/git" <<EOG
#!/bin/bash
for a in "\$@"; do [ "\$a" = read-tree ] && [ -e $W/slow ] && sleep 4; done
exec /usr/bin/git "\$@"
EOG
chmod +x "$W/bin/git"; touch "$W/slow"
( cd "$P" && PATH="$W/bin:$PATH" PYTHONPATH="$P/src" exec python3 -m te_series rebase --onto nx --te-src "$TE" ) &
pid=$!; sleep 2; kill -9 "$pid"; wait "$pid" 2>/dev/null; rm "$W/slow"; sleep 4
git -C fork worktree list
ts status
ts apply --force --te-src "$TE" 2>&1 | grep -v '^\[te-series'
# the advice, as written:
git -C fork worktree remove "$(git -C fork worktree list --porcelain | sed -n 's#^worktree .*/fork/##p' | head -1)"
