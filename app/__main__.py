"""`python -m app` (checkout), `python -m slang_visual_trainer` and the `visual-trainer` command."""

import sys

from .entry.fast_start import skip_torch


def main() -> int:
    skip_torch()  # before anything imports slangpy
    from .entry.cli import main as cli_main

    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
