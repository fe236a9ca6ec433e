"""--serve's packages are an optional extra (the desktop window needs neither): a one-line message
where they are missing, as the sweep's extra has."""

from __future__ import annotations

import importlib.util

from ..errors import UserError

PACKAGES = ("aiohttp", "simplejpeg")


def check_serve_packages() -> None:
    missing = [name for name in PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        raise UserError(
            f"--serve needs {' and '.join(missing)}: pip install 'slang-visual-trainer[serve]' "
            "(or `pip install -e .[serve]` in a checkout)"
        )
