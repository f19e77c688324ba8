#!/bin/bash
# A rebuild stopped in fork.new/, then patches/series edited: `status` and `export --dry-run`
# keep saying "go on: te-series apply --continue" / "Finish it (te-series apply --continue
# swaps it in)", and apply --continue refuses because the series changed.
. "$(dirname "$0")/common.sh" 8
python3 - <<'PY'
p='patches/series'; s=open(p).read()
a='0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch'; b='0008-PyTorch-Stop-the-fuser-s-backward-pass-at-the-bounda.patch'
open(p,'w').write(s.replace(a,'@A').replace(b,a).replace('@A',b))
PY
git commit -qam 'series: reorder'
ts apply --force --te-src "$W/te" 2>&1 | grep error          # stops in fork.new/ on 0008
sed -i '/^0005-/d' patches/series                            # then the series is edited
echo "--- status:"; ts status | grep 'go on'
echo "--- export --dry-run:"; ts export --dry-run 2>&1 | tail -1
echo "--- apply --continue (as both advise):"; ts apply --continue 2>&1 | grep error
