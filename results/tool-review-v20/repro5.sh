#!/bin/bash
# Finding 5: a global init.templateDir whose info/exclude ignores *.py hides a new, never
# added file of fork/ from export's "untracked files" refusal: the patch is exported
# without the file it imports (README: core.excludesFile is pinned off for this reason).
. "$(dirname "$0")/prelude.sh" 5
mkdir -p "$W/tmpl/info" && printf '*.py\n' > "$W/tmpl/info/exclude"
printf '[user]\n\tname = t\n\temail = t@example.invalid\n[init]\n\ttemplateDir = %s\n' "$W/tmpl" > "$W/gitconfig"
export GIT_CONFIG_GLOBAL="$W/gitconfig"
ts apply --te-src "$W/te" >/dev/null 2>&1
cd fork
printf 'def helper():\n    return 1\n' > transformer_engine/pytorch/ops/channel_helper.py
echo "from .channel_helper import helper  # noqa" >> transformer_engine/pytorch/ops/sequential.py
git commit -qam "[PyTorch] Use a channel helper

Adds the helper.

Signed-off-by: t <t@example.invalid>"
cd .. && ts export | tail -1; echo "export rc=$?"
grep -c channel_helper patches/0011-*.patch; grep -q 'b/transformer_engine/pytorch/ops/channel_helper.py' patches/0011-*.patch || echo "MISSING: channel_helper.py is in no patch; fork/ still has it untracked"
git -C fork status --short --ignored transformer_engine/pytorch/ops/
