"""The command line's checks that turn any bad value into one line naming the problem, before
a device is created or a file written: output folders and files that can be written, window
sizes, options that contradict --resume or --load-network, and where a window can open."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..errors import UserError
from ..files.folder_kind import KIND_NAMES, RACE, RUN, folder_kind
from ..files.mesh_export import check_mesh_path, check_resolution, marching_cubes_function
from ..files.tensorboard_events import check_options as check_tensorboard
from ..files.writable import check_output_dir
from .cli_fields import FLAGGED, NETWORK_FILE_OPTIONS, option_dest

WINDOW_MIN = (320, 240)
WINDOW_MAX = 16384
MAX_EXPORT_SCALE = 16
MAX_EXPORT_PIXELS = 1 << 26  # --export-image: 64 megapixels


def check_out_kind(path: Path, kind: str) -> None:
    """--out may be a new or empty folder, or one of its own kind (RUN or RACE) to write over,
    never another kind's: a run's summary.json over a race's would leave a folder that no longer
    makes sense (the sweep command refuses any folder that is not empty)."""
    found = folder_kind(path)
    if found is not None and found != kind:
        raise UserError(
            f"--out {str(path)!r} is {KIND_NAMES[found]}'s folder: {KIND_NAMES[kind]} would write over "
            "some of its files and leave the rest; choose another folder"
        )


def _made_by_out(folder: Path, out: Path | None) -> bool:
    """Whether the run makes `folder`: it is --out, or a folder inside it."""
    if out is None:
        return False
    folder, out = folder.resolve(), out.resolve()
    return folder == out or out in folder.parents


def check_file_path(text: str, option: str, suffix: str | None = None, out: Path | None = None) -> None:
    """A file that can be written (created or replaced), with `suffix` when one is given; its
    folder must exist, unless the run makes it: --out, `out`, or a folder inside it."""
    path = Path(text)
    if suffix is not None and path.suffix.lower() != suffix:
        raise UserError(f"{option} must name a {suffix} file (got {text!r})")
    if path.is_dir():
        raise UserError(f"{option} {text!r} is a folder, not a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise UserError(f"cannot write {option} {text!r}: no write permission")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir() and not _made_by_out(folder, out):
        raise UserError(f"cannot write {option} {text!r}: the folder {str(folder)!r} does not exist")
    check_output_dir(folder, option, text)


def check_export_image(args: argparse.Namespace, config) -> None:
    """--export-image needs an image target, and its scale a result of at most MAX_EXPORT_PIXELS
    (the config's image is known once --image is read, after check_headless)."""
    if args.export_image is None:
        return
    image = config.image
    if image is None:
        raise UserError("--export-image needs an image target (--image)")
    pixels = image["width"] * image["height"] * args.export_scale**2
    if pixels > MAX_EXPORT_PIXELS:
        raise UserError(
            f"--export-image at scale {args.export_scale} would be {pixels:,} pixels; at most {MAX_EXPORT_PIXELS:,}"
        )


def check_export_mesh(args: argparse.Namespace, config) -> None:
    """--export-mesh needs a function of (x, y, z) and scikit-image, refused before training."""
    if args.export_mesh is None:
        return
    if config.dims != 3:
        raise UserError("--export-mesh writes the zero level of a function of (x, y, z): use --dims 3")
    marching_cubes_function()


SERVE_OPTIONS = ("--serve", "--token-file", "--certfile", "--keyfile", "--open-sweep")


def refuse_serve_options(args: argparse.Namespace, mode: str) -> None:
    """--serve and its options serve the window: a run in `mode` ("--headless") has none to serve."""
    for option in SERVE_OPTIONS:
        if getattr(args, option[2:].replace("-", "_")) is not None:
            raise UserError(f"{option} serves the window to a browser; {mode} opens no window")


def check_headless(args: argparse.Namespace) -> None:
    refuse_serve_options(args, "--headless")
    if args.iterations is not None and args.iterations < 0:
        raise UserError(f"--iterations must be 0 or more (got {args.iterations})")
    if args.eval_every < 1:
        raise UserError(f"--eval-every must be at least 1 (got {args.eval_every})")
    out = Path(args.out) if args.out is not None else None
    if out is not None:
        check_output_dir(out)
        check_out_kind(out, RACE if args.variant else RUN)
    if not 1 <= args.export_scale <= MAX_EXPORT_SCALE:
        raise UserError(f"--export-scale must be between 1 and {MAX_EXPORT_SCALE} (got {args.export_scale})")
    if args.mesh_resolution is not None:
        check_resolution(args.mesh_resolution)
        if args.export_mesh is None:
            raise UserError("--mesh-resolution is --export-mesh's lattice: use it with --export-mesh")
    if args.export_mesh is not None:
        check_mesh_path(args.export_mesh)
    checked = (
        ("--screenshot", ".png"),
        ("--save-checkpoint", None),
        ("--export-slang", ".slang"),
        ("--export-image", ".png"),
        ("--export-mesh", None),
    )
    for option, suffix in checked:
        value = getattr(args, option[2:].replace("-", "_"))
        if value is not None:
            check_file_path(value, option, suffix, out)
    check_tensorboard(args.tensorboard, args.tensorboard_images)
    _check_size(args)
    _check_start(args)


def check_window(args: argparse.Namespace) -> None:
    _check_size(args)
    if args.variant:
        raise UserError("--variant races headless (with --headless); in the window use the Race panel")
    for option in ("--save-checkpoint", "--export-slang", "--export-image", "--export-mesh", "--mesh-resolution"):
        if getattr(args, option[2:].replace("-", "_")) is not None:
            raise UserError(f"{option} is for --headless runs; in the window use the File menu")
    if args.tensorboard is not None or args.tensorboard_images is not None:
        raise UserError("--tensorboard is for --headless runs, races and sweeps")
    if args.screenshot is not None:
        check_file_path(args.screenshot, "--screenshot", ".png")
    _check_start(args)
    if args.screenshot_after is not None and args.screenshot_after < 0:
        raise UserError(f"--screenshot-after must be 0 or more (got {args.screenshot_after})")
    if args.serve is None:
        for option in SERVE_OPTIONS[1:]:
            if getattr(args, option[2:].replace("-", "_")) is not None:
                raise UserError(f"{option} is for --serve")
    elif args.screenshot_after is not None:
        raise UserError("--screenshot-after is for the desktop window; a served one saves screenshots with F12")
    no_display = not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    if args.serve is None and sys.platform.startswith("linux") and no_display:
        raise UserError(
            "no display to open a window on (DISPLAY is not set); use --serve PORT to use the window in a browser, "
            "or --headless to train without a window"
        )


def _check_start(args: argparse.Namespace) -> None:
    """--resume takes the network and config from the checkpoint, --load-network the network
    from its file: options that would contradict them are refused rather than ignored (network
    options beside --resume once the checkpoint is read: app/entry/resume_options.py)."""
    if args.resume is not None:
        taken = ["--load-network"] if args.load_network is not None else []
        taken += [f"--{name}" for name in ("preset", "config") if getattr(args, name) is not None]
        if taken:
            raise UserError(
                f"{taken[0]} cannot be combined with --resume, which continues the checkpoint's network and config"
            )
    if args.load_network is not None:
        taken = [
            FLAGGED[name].flag.name for name in NETWORK_FILE_OPTIONS if getattr(args, option_dest(name)) is not None
        ]
        if taken:
            raise UserError(
                f"{taken[0]} cannot be combined with --load-network, which takes the network's structure from its file"
            )


def _check_size(args: argparse.Namespace) -> None:
    for name, value, low in (("--width", args.width, WINDOW_MIN[0]), ("--height", args.height, WINDOW_MIN[1])):
        if value is not None and not low <= value <= WINDOW_MAX:
            raise UserError(f"{name} must be between {low} and {WINDOW_MAX} pixels (got {value})")
