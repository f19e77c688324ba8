R=$W
rm -rf "$R/$1"; git clone -q <project> "$R/$1"; cd "$R/$1"
git config user.name t; git config user.email t@example.invalid
ts() { PYTHONPATH=$PWD/src $W/cvenv/bin/python -m te_series "$@"; }
