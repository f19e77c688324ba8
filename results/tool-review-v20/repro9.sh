#!/bin/bash
# Finding 9: range-diff REV, where REV's series lists a file REV lacks: on the PyPI base the
# error is about "patches/series line N" of the working tree (no "at REV"), and says to
# restore the file there or remove the line, neither of which exists in the working tree.
. "$(dirname "$0")/prelude.sh" 9
echo "0011-missing.patch" >> patches/series && git commit -qam "bad series"
git revert --no-edit HEAD >/dev/null
ts range-diff HEAD~1; echo "rc=$?"
git checkout -- patches/0011-missing.patch; grep -c 0011-missing patches/series   # the advice, followed
