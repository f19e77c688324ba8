source $W/fresh.sh f5 >/dev/null
ts apply --te-src ../te >/dev/null 2>&1
mv fork /tmp/f5-fork.tmp && mkdir fork && mount -t tmpfs -o size=400m tmpfs fork   # fork/ on a tmpfs
cp -a /tmp/f5-fork.tmp/. fork/ && rm -rf /tmp/f5-fork.tmp
(cd fork && echo "# mine" >> transformer_engine/pytorch/ops/__init__.py && git commit -qam "[PyTorch] unexported work")
ts apply --force --te-src ../te 2>&1 | grep -v '^\[te-series'
echo "fork/ now holds: $(ls -A fork | wc -l) entries"; ts status
find .te-series-backup -maxdepth 2
git -C .te-series-backup/*/fork log --oneline -1
umount fork
