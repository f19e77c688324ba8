mkdir -p $W/t7 && mount -t tmpfs -o size=1g tmpfs $W/t7
git clone -q <project> $W/t7/p && cd $W/t7/p
git config user.name t; git config user.email t@example.invalid
ts() { PYTHONPATH=$PWD/src $W/cvenv/bin/python -m te_series "$@"; }
ts apply --te-src $W/te >/dev/null 2>&1
ln -s fork .te-series-backup            # backups "inside" the work tree (same file system)
ts apply --force --te-src $W/te 2>&1 | grep -v '^\[te-series' > /tmp/f7.err
wc -c < /tmp/f7.err; cut -c1-160 /tmp/f7.err; grep -o 'Errno [0-9]*[^"]*' /tmp/f7.err | sort | uniq -c | head -3
df -h . | tail -1
ls -d fork/2* ; find fork/2* -type d | awk -F/ '{print NF}' | sort -n | tail -1
git -C fork status --short | head -3
cd /; umount $W/t7
