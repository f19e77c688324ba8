set +e
source $W/fresh.sh f1 >/dev/null
ts apply --te-src ../te >/dev/null 2>&1
cd fork
GIT_SEQUENCE_EDITOR="sed -i -e '/Test channel routing/s/^pick/reword/' -e '/Plan each fusion/s/^pick/reword/'" \
  GIT_EDITOR="sed -i '1s/\$/ (v9)/'" git -c commit.cleanup=whitespace -c commit.status=false rebase -q -i HEAD~9 >/dev/null 2>&1
cd ..
chattr +i patches/0008-*.patch
ts export; echo "rc=$?"
git status --short
chattr -i patches/0008-*.patch
