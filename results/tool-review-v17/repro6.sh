source $W/fresh.sh f6 >/dev/null
PYTHONPATH=$PWD/src $W/cvenv/bin/python -m te_series check --te-src ../te > /tmp/f6.out 2>&1 &
P=$!
until pgrep -P $P -f "black --check" >/dev/null; do sleep 0.2; done; sleep 0.7   # black is running, with its workers
kill -TERM $P; wait $P; echo "check rc=$?"; tail -3 /tmp/f6.out
sleep 20
ps -eo pid,ppid,etime,stat,args | awk '$2==1 && /tool-review-v17\/cvenv\/bin\/python -m black/' | cut -c1-110
