# source with TREE=<the PR tree> (patched) or <its base tree> (base: 0001-0008)
SP=$PROJECT/.venv/lib/python3.11/site-packages
export LD_LIBRARY_PATH=$(ls -d $SP/nvidia/*/lib | tr '\n' ':')
export PYTHONPATH=$TREE:$PROJECT/src
export PYTHONWARNINGS=ignore
PY=$PROJECT/.venv/bin/python
