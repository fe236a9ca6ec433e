"""`python -m app` (checkout), `python -m slang_visual_trainer` and the `visual-trainer` command."""

import sys

from .entry.fast_start import skip_torch
from .errors import EXIT_INTERRUPTED
from .interrupts import hold_ctrl_c_while_importing


def main() -> int:
    skip_torch()  # before anything imports slangpy
    hold_ctrl_c_while_importing()  # SlangPy's and imgui-bundle's C++ set-up, wherever it first comes
    try:
        from .entry.cli import main as cli_main

        return cli_main()
    except KeyboardInterrupt:  # Ctrl+C before a command's own handling (while it imports, say)
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
