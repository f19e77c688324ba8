SP=/work/main/.venv/lib/python3.11/site-packages
export LD_LIBRARY_PATH=$(ls -d $SP/nvidia/*/lib $SP/nvidia/cu13/lib 2>/dev/null | tr '\n' ':')
export PY=/work/main/.venv/bin/python
