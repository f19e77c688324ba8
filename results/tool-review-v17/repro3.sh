source $W/fresh.sh f3 >/dev/null
ts apply --te-src ../te >/dev/null 2>&1
cd fork
echo "# note" >> transformer_engine/pytorch/ops/__init__.py
git commit -qa -m "[PyTorch] Document the op list" \
  -m "From: the review of #3320 (quoted below)" -m "Reviewer asked for this." \
  -m "Signed-off-by: t <t@example.invalid>"
git log -1 --format='author: %an <%ae>'
cd ..
ts export --dry-run 2>&1 | grep -v unchanged
