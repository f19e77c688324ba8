swap_subjects() { # swap subjects of commits 0003 and 0006 in fork/ with notes.rewrite.rebase off
  (cd $T/fork && git config notes.rewrite.rebase false &&
  base=$(git rev-parse series~11) &&
  GIT_SEQUENCE_EDITOR='sed -i -e "s/^pick \(.*Do not lock.*\)/reword \1/" -e "s/^pick \(.*tensor counts.*\)/reword \1/"' \
  GIT_EDITOR='python3 -c "
import sys;p=sys.argv[1];s=open(p).read()
a=\"[PyTorch] Do not lock channel bindings in standalone calls\";b=\"[PyTorch] Check the tensor counts that fused ops return\"
s=(b+s[len(a):]) if s.startswith(a) else (a+s[len(b):]) if s.startswith(b) else s
open(p,\"w\").write(s)"' git rebase -q -i $base >/dev/null)
}
follow_notes_advice() { # run every "git -C fork notes ..." line from export's message
  ts export --dry-run 2>&1 | grep -o "git -C fork notes .*" | while read -r l; do (cd $T && eval "$l"); done
}
