"""`python -m app` (checkout), `python -m slang_visual_trainer` and the `visual-trainer` command."""

import sys

from .entry.fast_start import skip_torch
from .errors import EXIT_INTERRUPTED


def main() -> int:
    skip_torch()  # before anything imports slangpy
    try:
        from .entry.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:  # Ctrl+C before a command's own handling (while it imports, say)
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
