"""The Config table's fields as command-line options (app/config/config.py declares each field's flag):
which fields have one, which --resume may change, which --resume and --load-network refuse, and
add_argument's keywords for each, with the readers of their values."""

from __future__ import annotations

import argparse

from ..config import config as cfg
from ..config.spec import HOT, Between, Choice, Fraction, Positive, Spec, Whole
from ..model.optimizers import OPTIMIZERS

_DEFAULTS = cfg.Config()
FLAGGED = {name: spec for name, spec in cfg.FIELDS.items() if spec.flag is not None}
# The options that set their field directly (not --target-file, which names a file to compile).
DIRECT_OPTIONS = tuple(name for name, spec in FLAGGED.items() if spec.flag.dest is None)
HOT_OPTIONS = tuple(name for name in DIRECT_OPTIONS if cfg.FIELDS[name].kind == HOT)  # --resume may change these
# Options refused beside --resume, which continues the checkpoint's network and truth, and beside
# --load-network, which brings what a network.json holds.
NETWORK_OPTIONS = tuple(name for name, spec in FLAGGED.items() if spec.structural)
NETWORK_FILE_OPTIONS = tuple(name for name, spec in FLAGGED.items() if spec.in_network_file)


def _widths(text: str) -> list[int]:
    parts = text.split(",")
    if not all(part.strip().isdigit() for part in parts):
        raise argparse.ArgumentTypeError(f"takes comma-separated widths like 16,16 (got {text!r})")
    return [int(part) for part in parts]


def _names(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"takes comma-separated names like x,y,x2 (got {text!r})")
    return names


def nonempty_text(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _default(name: str) -> str:
    value = getattr(_DEFAULTS, name)
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def option_dest(name: str) -> str:
    return FLAGGED[name].flag.dest or name


_PARSERS = {"widths": _widths, "names": _names, "text": nonempty_text, "real": float}


def field_option(name: str, spec: Spec) -> dict:
    """add_argument's keywords for a field's flag, from its check where that says how to read it."""
    flag, check = spec.flag, spec.check
    options = {
        "dest": option_dest(name),
        "metavar": flag.metavar,
        "help": flag.help.format(
            label=spec.label,
            choices=", ".join(check.options) if isinstance(check, Choice) else "",
            default=_default(name),
            used_by=", ".join(o.name for o in OPTIMIZERS.values() if name in o.fields),
        ),
    }
    if isinstance(check, Choice):
        options["choices"] = check.options
    elif isinstance(check, Whole):
        options["type"] = int
    elif isinstance(check, (Positive, Fraction, Between)):
        options["type"] = float
    else:
        options["type"] = _PARSERS[flag.parse]
    if flag.repeat:
        options["action"] = "append"
    return options
