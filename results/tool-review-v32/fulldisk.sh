# helper for repro1/repro2: a project clone with a git-base fork/ on a 300 MB tmpfs of its
# own (TMPDIR there too, as on a machine whose /tmp is on the full disk), one new commit.
source /work/tool-review-v32/common.sh
make_te_src
mkdir -p $T/small && mount -t tmpfs -o size=300m tmpfs $T/small || { echo "mount not allowed"; cleanup; exit 1; }
cleanup_fd() { cd /; umount $T/small; cleanup; }
git clone -q /work/tool-try-v32 $T/small/p
export PYTHONPATH=$T/small/p/src TMPDIR=$T/small/tmp; mkdir -p $TMPDIR
P=$T/small/p
(cd $P && python3 -m te_series apply --te-src $T/te-src >/dev/null 2>&1)
cd $P/fork && echo "# my work" >> transformer_engine/pytorch/ops/__init__.py && git commit -qam "[PyTorch] My work

Signed-off-by: Tester <tester@corp.dev>" && cd $P
fill() { rm -f $T/small/filler; a=$(df -k --output=avail $T/small | tail -1); n=$((a-$1)); [ $n -gt 0 ] && fallocate -l ${n}k $T/small/filler; }
