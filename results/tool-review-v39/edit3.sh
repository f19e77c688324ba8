# helpers: amend the fork/ commit of patch 0003 with a sed on a file
amend3() { # file sed-expr
  local c=$(git -C $T/proj/fork log --format=%h --grep='Do not lock channel bindings' -1)
  GIT_SEQUENCE_EDITOR="sed -i 's/^pick $c/edit $c/'" git -C $T/proj/fork rebase -q -i HEAD~11 >/dev/null 2>&1
  sed -i "$2" $T/proj/fork/$1
  git -C $T/proj/fork commit -q -a --amend --no-edit
  git -C $T/proj/fork rebase --continue >/dev/null 2>&1
}
P3=patches/0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch
