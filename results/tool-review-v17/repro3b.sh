source $W/fresh.sh f3b >/dev/null
ts apply --te-src ../te >/dev/null 2>&1
cd fork; echo "# q" >> transformer_engine/pytorch/ops/__init__.py
git commit -qa --author="Dœ O'Brien \"OB\" <o@x.org>" -m "[PyTorch] quote author" -m "Signed-off-by: t <t@example.invalid>"
git log -1 --format='author now: [%an]'; cd ..
ts export --dry-run 2>&1 | grep author
