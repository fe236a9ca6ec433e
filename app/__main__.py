import sys

from app.fast_start import skip_torch

skip_torch()  # before anything imports slangpy

from app.cli import main  # noqa: E402

sys.exit(main())
