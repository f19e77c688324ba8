#!/bin/bash
# `te-series rebase --abort` in a project without fork/: an OSError reported as "not the
# series'", with advice (free space / permission, run again) that cannot help.
source /work/tool-review-v25/common.sh; set +e
ts rebase --abort; echo rc=$?
ts rebase --abort; echo rc=$?   # following "run the command again": same
