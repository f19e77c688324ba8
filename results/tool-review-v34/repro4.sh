#!/bin/bash
# minor: PR slug messages. (a) '..', '-rf', '.hidden' are refused with a rule they seem to
# satisfy ("lower-case letters, digits, '.', '_', '-'": it must also start with a letter or
# digit); (b) each invalid slug also gets "write its description patches/pr/<slug>.md", which
# cannot help; '../../escape' is told its description is "escape.md"; (c) a renamed slug gets
# "delete patches/pr/contract.md" + "write patches/pr/counts.md" instead of a git mv, and
# export writes a series that pr/check reject (README: "Export never writes a `series` whose
# `# pr:` groups check rejects").
. "$(dirname "$0")/common.sh"
mk_te_src; mk_fakemain
cd $T/proj
for s in '..' '-rf' '.hidden' '../../escape'; do
  sed -i "s|^# pr: moe-example on fixes|# pr: $s on fixes|" patches/series
  echo "== slug [$s]"; ts pr --te-src $T/te-src 2>&1 | grep -v '^\[te-series'
  git checkout -q patches/series
done
echo "== slug renamed contract -> counts (description not renamed), then a new commit exported"
sed -i 's/^# pr: contract on fixes/# pr: counts on fixes/; s/^# pr: channel-routing on contract/# pr: channel-routing on counts/' patches/series
git commit -qam "rename slug"
echo "# x" >> fork/transformer_engine/pytorch/ops/__init__.py
git -C fork commit -qam "[PyTorch] Extra

Signed-off-by: Tess Ter <tess@nvidia.com>"
ts export | grep -v unchanged
ts pr --te-src $T/te-src 2>&1 | grep -v '^\[te-series'
cleanup
