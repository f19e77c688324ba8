#!/bin/bash
# A committed patch file that lost its mbox "From <sha> <date>" first line: apply's advice
# "restore it (git checkout HEAD -- FILE ...) then run the command again" loops.
source /work/tool-review-v25/common.sh; set +e
(cd $T && sed -i 1d patches/0011-*.patch && git commit -qam "0011 edited (first line lost)")
ts apply --te-src $TE 2>&1 | grep error; echo apply=$?
cmd=$(ts apply --te-src $TE 2>&1 | grep -o "git checkout HEAD -- [^,]*")
echo "following: $cmd"; (cd $T && $cmd)
ts apply --te-src $TE 2>&1 | grep error
