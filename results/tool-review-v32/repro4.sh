#!/bin/bash
# --out that is a symbolic link to nothing (a disk not mounted) is followed: _path() resolves
# it before refuse_out's "link to nothing" check (v28 #6) can see a link, and pr/port create
# the missing folders at the link's target.
source /work/tool-review-v32/common.sh
mkdir -p $T/mnt                                  # "usbdisk" is not mounted
ln -s $T/mnt/usbdisk/ports $T/port-out-link
ts port --out $T/port-out-link 2>&1 | grep -v '^\[te-series'; echo "rc=$?"
echo "== created behind the link:"; find $T/mnt -maxdepth 3 | head -5
cleanup
