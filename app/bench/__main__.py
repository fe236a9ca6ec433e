"""`python -m app.bench [TOOL] [options]`: the benchmarks' one command (app/bench/tools.py), which
is `visual-trainer-bench` once installed."""

import sys

from .tools import main

if __name__ == "__main__":
    sys.exit(main())
