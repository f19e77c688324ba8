import sys

# Ctrl-C while Python imports the tool (or anywhere before cli.main's own handler) is
# one line too, not a traceback.
try:
    from .cli import main

    CODE = main()
except KeyboardInterrupt:
    print("\nte-series: interrupted (Ctrl-C) while starting; nothing was written.", file=sys.stderr)
    CODE = 130
sys.exit(CODE)
