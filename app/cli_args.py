"""The command line's options: the parser (every option with a description and its default in
--help), and the checks that turn any bad value into one line naming the problem, before a
device is created or a file written. The network and training options are the Config table's
flags (app/config.py): which exist, how they read, and which --resume and --load-network take."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import checkpoint as ckpt
from . import config as cfg
from .config_spec import HOT, Between, Choice, Fraction, Positive, Spec, Whole
from .datasets import configure, entry_for
from .device import DEVICE_TYPES
from .errors import UserError
from .network_io import load_network
from .optimizers import OPTIMIZERS
from .start import Start

WINDOW_MIN = (320, 240)
MORE_STEPS = 1000  # a headless run trains this many steps unless --iterations says otherwise
MAX_EXPORT_SCALE = 16
WINDOW_MAX = 16384
_DEFAULTS = cfg.Config()
_FLAGGED = {name: spec for name, spec in cfg.FIELDS.items() if spec.flag is not None}
# The options that set their field directly (not --target-file, which names a file to compile).
_DIRECT = tuple(name for name, spec in _FLAGGED.items() if spec.flag.dest is None)
HOT_OPTIONS = tuple(name for name in _DIRECT if cfg.FIELDS[name].kind == HOT)  # --resume may change these


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UserError(message)


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


def _text(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("must not be empty")
    return text


def _default(name: str) -> str:
    value = getattr(_DEFAULTS, name)
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def _dest(name: str) -> str:
    return _FLAGGED[name].flag.dest or name


def _listed(options: list[str]) -> str:
    return options[0] if len(options) == 1 else f"{', '.join(options[:-1])} and {options[-1]}"


_PARSERS = {"widths": _widths, "names": _names, "text": _text, "real": float}


def _field_option(name: str, spec: Spec) -> dict:
    """add_argument's keywords for a field's flag, from its check where that says how to read it."""
    flag, check = spec.flag, spec.check
    options = {
        "dest": _dest(name),
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


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="visual-trainer",
        description="Train a small MLP with Slang autodiff on the GPU and watch it "
        "fit. Without --headless it opens the window.",
    )
    mode = p.add_argument_group("mode")
    mode.add_argument("--headless", action="store_true", help="train without a window and write the results")
    mode.add_argument(
        "--iterations",
        type=int,
        metavar="N",
        help="headless: train until step N, counted from the "
        f"start; after --resume, {MORE_STEPS} steps past its step unless given (default {MORE_STEPS})",
    )
    mode.add_argument("--out", type=_text, metavar="DIR", help="headless output folder (default runs/<timestamp>/)")
    mode.add_argument(
        "--eval-every",
        type=int,
        default=100,
        metavar="K",
        help="headless: evaluate on the grid every K steps (default 100)",
    )
    mode.add_argument(
        "--screenshot",
        type=_text,
        metavar="PNG",
        help="headless: also render the full window after training into this PNG file",
    )
    mode.add_argument("--quiet", action="store_true", help="headless: no progress bar or loss lines")
    mode.add_argument(
        "--grad-check",
        action="store_true",
        help="check the training kernels' parameter gradients "
        "against an independent SlangPy path and finite differences; exit 4 if they disagree. Alone: "
        "the initial network, no window; with --headless: the trained network, after the run",
    )
    mode.add_argument(
        "--device",
        default="auto",
        choices=tuple(DEVICE_TYPES),
        help="GPU API (default auto; SLANGPY_DEVICE_TYPE_OVERRIDE wins where it is set)",
    )
    net = p.add_argument_group("network and training (each overrides --preset and --config)")
    net.add_argument(
        "--config", type=_text, metavar="FILE", help="a JSON config, or the summary.json of an earlier run"
    )
    net.add_argument(
        "--preset", type=_text, metavar="NAME", help=f"start from a preset: {', '.join(cfg.preset_names())}"
    )
    for name, spec in _FLAGGED.items():
        net.add_argument(spec.flag.name, **_field_option(name, spec))
    files = p.add_argument_group("checkpoints and export")
    files.add_argument(
        "--resume",
        type=_text,
        metavar="CKPT",
        help="continue from a checkpoint: its network, optimizer state, step, config and loss history; "
        f"{_listed([_FLAGGED[name].flag.name for name in HOT_OPTIONS])} may change its config",
    )
    files.add_argument(
        "--save-checkpoint",
        type=_text,
        metavar="PATH",
        help="headless: save the whole training state at the end, for --resume",
    )
    files.add_argument(
        "--export-slang",
        type=_text,
        metavar="PATH",
        help="headless: write the trained network as one standalone .slang file defining trained_network(xy, outputs)",
    )
    files.add_argument(
        "--export-image",
        type=_text,
        metavar="PNG",
        help="headless, with an image target: write the learned image, --export-scale times the image's resolution",
    )
    files.add_argument(
        "--export-scale",
        type=int,
        default=1,
        metavar="K",
        help=f"--export-image's resolution, 1-{MAX_EXPORT_SCALE} times the image's (default 1)",
    )
    files.add_argument(
        "--load-network",
        type=_text,
        metavar="JSON",
        help="start training from a network.json written earlier: its structure and weights, fresh optimizer state",
    )
    win = p.add_argument_group("window")
    win.add_argument("--width", type=int, default=1280, help="window width in pixels (default 1280)")
    win.add_argument("--height", type=int, default=800, help="window height in pixels (default 800)")
    win.add_argument("--no-vsync", action="store_true", help="don't wait for the display's refresh")
    win.add_argument("--fresh", action="store_true", help="ignore the config, layout and autosave of the last session")
    # For tests and scripted screenshots of the real window: after N frames, save the window's
    # frame to --screenshot (or the F12 folder) and keep running.
    win.add_argument("--screenshot-after", type=int, metavar="N", help=argparse.SUPPRESS)
    return p


def config_from_args(args: argparse.Namespace, base: cfg.Config | None = None) -> cfg.Config:
    config = base or cfg.Config()
    if args.preset is not None:
        config = cfg.load_preset(args.preset, config)
    if args.config is not None:
        config = cfg.load_file(args.config, config)
    if args.targets is not None and args.target_file is not None:
        raise UserError("use --target or --target-file, not both")
    if args.image_file is not None and (args.targets is not None or args.target_file is not None):
        raise UserError(f"use --image or {'--target' if args.targets is not None else '--target-file'}, not both")
    overrides = {name: getattr(args, name) for name in _DIRECT if getattr(args, name) is not None}
    if args.targets is not None:
        overrides["slang_target"] = None
    if args.features is not None:  # the features are a setting of the feature encoding
        if args.encoding not in (None, "features"):
            raise UserError(f"--features is the feature encoding's setting: use it without --encoding {args.encoding}")
        overrides["encoding"] = "features"
    config = cfg.from_dict(overrides, config, source="options") if overrides else cfg.validate(config)
    if args.dataset_source is not None:
        config = configure(config, entry_for(args.dataset_source))
    return config


def resolve_start(args: argparse.Namespace, base: cfg.Config | None = None) -> Start:
    """The start the options describe (cli_args has refused contradicting ones). `base` is what
    the options build on without --resume: the defaults, or the window's saved config."""
    if args.resume is not None:
        checkpoint = ckpt.load(args.resume)
        overrides = {name: getattr(args, name) for name in HOT_OPTIONS if getattr(args, name) is not None}
        config = cfg.from_dict(overrides, checkpoint.config, source="options") if overrides else checkpoint.config
        return Start(config, checkpoint=checkpoint)
    config = config_from_args(args, base)
    if args.load_network is not None:
        config, parameters = load_network(args.load_network, config)
        return Start(config, parameters=parameters)
    return Start(config)


def iterations_for(args: argparse.Namespace, start: Start) -> int:
    """The step a headless run trains to: --iterations, counted from the start, or MORE_STEPS
    past where it starts."""
    iterations = args.iterations if args.iterations is not None else start.step + MORE_STEPS
    if iterations < start.step:
        raise UserError(
            f"--iterations {iterations} is below the checkpoint's step {start.step}: it is the step "
            "to train to, counted from the start"
        )
    return iterations


def check_output_dir(path: Path, option: str = "--out") -> None:
    """Fails early on a folder that can't be written, without creating anything."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise UserError(f"cannot write {option} {str(path)!r}: {str(probe)!r} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UserError(f"cannot write {option} {str(path)!r}: no write permission in {str(probe)!r}")


def check_file_path(text: str, option: str, suffix: str | None = None) -> None:
    """A file that can be written (created or replaced), with `suffix` when one is given."""
    path = Path(text)
    if suffix is not None and path.suffix.lower() != suffix:
        raise UserError(f"{option} must name a {suffix} file (got {text!r})")
    if path.is_dir():
        raise UserError(f"{option} {text!r} is a folder, not a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise UserError(f"cannot write {option} {text!r}: no write permission")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"cannot write {option} {text!r}: the folder {str(folder)!r} does not exist")
    check_output_dir(folder, option)


def check_headless(args: argparse.Namespace) -> None:
    if args.iterations is not None and args.iterations < 0:
        raise UserError(f"--iterations must be 0 or more (got {args.iterations})")
    if args.eval_every < 1:
        raise UserError(f"--eval-every must be at least 1 (got {args.eval_every})")
    if args.out is not None:
        check_output_dir(Path(args.out))
    if not 1 <= args.export_scale <= MAX_EXPORT_SCALE:
        raise UserError(f"--export-scale must be between 1 and {MAX_EXPORT_SCALE} (got {args.export_scale})")
    checked = (
        ("--screenshot", ".png"),
        ("--save-checkpoint", None),
        ("--export-slang", ".slang"),
        ("--export-image", ".png"),
    )
    for option, suffix in checked:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None:
            check_file_path(value, option, suffix)
    _check_size(args)
    _check_start(args)


def check_window(args: argparse.Namespace) -> None:
    _check_size(args)
    for option in ("--save-checkpoint", "--export-slang", "--export-image"):
        if getattr(args, option[2:].replace("-", "_")) is not None:
            raise UserError(f"{option} is for --headless runs; in the window use the File menu")
    if args.screenshot is not None:
        check_file_path(args.screenshot, "--screenshot", ".png")
    _check_start(args)
    if args.screenshot_after is not None and args.screenshot_after < 0:
        raise UserError(f"--screenshot-after must be 0 or more (got {args.screenshot_after})")
    if sys.platform.startswith("linux") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        raise UserError("no display to open a window on (DISPLAY is not set); use --headless to train without a window")


# Options refused beside --resume, which continues the checkpoint's network and truth, and beside
# --load-network, which brings what a network.json holds.
_NETWORK_OPTIONS = tuple(name for name, spec in _FLAGGED.items() if spec.structural)
_NETWORK_FILE_OPTIONS = tuple(name for name, spec in _FLAGGED.items() if spec.in_network_file)


def _check_start(args: argparse.Namespace) -> None:
    """--resume takes the network and config from the checkpoint, --load-network the network
    from its file: options that would contradict them are refused rather than ignored."""
    if args.resume is not None:
        taken = ["--load-network"] if args.load_network is not None else []
        taken += [f"--{name}" for name in ("preset", "config") if getattr(args, name) is not None]
        taken += [_FLAGGED[name].flag.name for name in _NETWORK_OPTIONS if getattr(args, _dest(name)) is not None]
        if taken:
            raise UserError(
                f"{taken[0]} cannot be combined with --resume, which continues the checkpoint's network and config"
            )
    if args.load_network is not None:
        taken = [_FLAGGED[name].flag.name for name in _NETWORK_FILE_OPTIONS if getattr(args, _dest(name)) is not None]
        if taken:
            raise UserError(
                f"{taken[0]} cannot be combined with --load-network, which takes the network's structure from its file"
            )


def _check_size(args: argparse.Namespace) -> None:
    for name, value, low in (("--width", args.width, WINDOW_MIN[0]), ("--height", args.height, WINDOW_MIN[1])):
        if not low <= value <= WINDOW_MAX:
            raise UserError(f"{name} must be between {low} and {WINDOW_MAX} pixels (got {value})")
