#!/bin/bash
# A colleague changes patch 0003 in two places: (A) a wording fix of the new error message
# and (B) a blank line added to a test. fork/ made (A) too, and also changed the next line
# (a change of its own next to the colleague's, which export accepts), but not (B).
# export accepts and writes fork/'s version: the colleague's (B) is undone.
. /work/tool-review-v30/common.sh
trap cleanup EXIT
ts "$T/me" apply --te-src "$T/te" >/dev/null 2>&1
ts "$T/col" apply --te-src "$T/te" >/dev/null 2>&1
F=transformer_engine/pytorch/ops/fuser.py
TF=tests/pytorch/test_fusible_ops.py
# colleague: (A) and (B), export, commit
sub "$T/col/fork/$F" 'has no producer in this fuser "' 'has no producer in its fuser "'
sub "$T/col/fork/$TF" '        consumer.set_extra_input_channel(0, "route")
        x = torch.rand((size,))
        if fused:' '        consumer.set_extra_input_channel(0, "route")

        x = torch.rand((size,))
        if fused:'
fixup "$T/col/fork" "Do not lock channel bindings in standalone"
ts "$T/col" export >/dev/null
git -C "$T/col" commit -qam "Reword the missing-producer error; space out a test"
# me: (A) as well, and the next line of the message, in fork/; then pull
sub "$T/me/fork/$F" 'has no producer in this fuser "' 'has no producer in its fuser "'
sub "$T/me/fork/$F" '"(produced channels: {sorted(channel_producers)})"' '"(channels it produces: {sorted(channel_producers)})"'
fixup "$T/me/fork" "Do not lock channel bindings in standalone"
git -C "$T/me" pull -q --no-rebase --no-edit "$T/col" HEAD
P=patches/0003-PyTorch-Do-not-lock-channel-bindings-in-standalone-c.patch
echo "--- colleague's (B) in the pulled patch:"; grep -n -A2 '^+        consumer.set_extra_input_channel(0, "route")$' "$T/me/$P" | head -3
ts "$T/me" export | grep -v unchanged; echo "export rc=${PIPESTATUS[0]}"
echo "--- after export:"; grep -n -A2 '^+        consumer.set_extra_input_channel(0, "route")$' "$T/me/$P" | head -3
echo "--- what the export did to the colleague's file:"; git -C "$T/me" diff -U1 | grep -v '^ '
