#!/bin/bash
# R1: a user setting am.messageid=true makes every apply+export add a "Message-Id:" line to
# the commit message of a patch that carries a Message-Id header (an extra mail header,
# which export keeps byte for byte). Nothing was changed in fork/.
. "$(dirname "$0")/prelude.sh"
export GIT_CONFIG_GLOBAL=$W/gc-msgid      # instead of editing ~/.gitconfig
printf '[user]\n\tname = T\n\temail = t@x.org\n[am]\n\tmessageid = true\n' > $GIT_CONFIG_GLOBAL
f=patches/0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch
sed -i '0,/^Subject: /s//Message-Id: <20261201.0003@lists.example>\nSubject: /' $f
git commit -qam "0003 as it came by mail"
for round in 1 2 3; do
  ts apply --force --te-src $TE >/dev/null 2>&1 || echo "apply failed"
  ts export | grep -v unchanged
  git commit -qam "round $round"
  echo "round $round: $(grep -c '^Message-Id:' $f) Message-Id lines in $f"
done
sed -n '/^Signed-off-by/,/^---$/p' $f
