"""`python -m app.bench [TOOL] [options]`: the benchmarks' one command (app/bench/command.py), which
is `visual-trainer-bench` once installed."""

import sys

from .command import main

if __name__ == "__main__":
    sys.exit(main())
