# re-enter an existing world: source env.sh /tmp/try39-X
T=$1; cd "$T/proj" || { echo "NO WORLD $T"; exit 1; }
export T HOME=$T/home TE_SERIES_CACHE=$T/cache PYTHONPATH=$T/proj/src
ts() { (cd $T/proj && python3 -m te_series "$@"); }
