"""The command line's options: the parser (every option with a description and its default in
--help), and what the parsed options describe: the config, the start (a config, a checkpoint
or a network.json) and the step a headless run trains to. The network and training options are
the Config table's flags (app/entry/cli_fields.py); the checks of the values are in app/entry/cli_checks.py."""

from __future__ import annotations

import argparse

from ..config import config as cfg
from ..config import files as config_files
from ..config.records import from_dict
from ..config.truths import with_dataset, without_other_truths
from ..datasets import NO_DATASET, entry_for
from ..errors import UserError
from ..files import checkpoint as ckpt
from ..files.mesh_export import DEFAULT_RESOLUTION, MAX_RESOLUTION, MIN_RESOLUTION
from ..files.network_io import load_network
from ..files.start import Start
from ..files.tensorboard_events import IMAGE_EVERY
from ..gpu.adapters import parse_gpu_option
from ..gpu.device import DEVICE_TYPES
from ..serve.address import add_serve_options
from ..truth.mesh_truth import is_mesh_spec
from ..truth.sdf_truth import sdf_domain
from .cli_checks import MAX_EXPORT_SCALE
from .cli_fields import DIRECT_OPTIONS, FLAGGED, HOT_OPTIONS, field_option, nonempty_text
from .resume_options import refuse_disagreeing

MORE_STEPS = 1000  # a headless run trains this many steps unless --iterations says otherwise


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UserError(message)


def _gpu_choice(text: str) -> str:
    """--gpu's value, checked for its form here (which adapter it names is known only once the
    device type is: app/gpu/adapters.py)."""
    parse_gpu_option(text)
    return text.strip()


def _listed(options: list[str]) -> str:
    return options[0] if len(options) == 1 else f"{', '.join(options[:-1])} and {options[-1]}"


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="visual-trainer",
        description="Train a small MLP with Slang autodiff on the GPU and watch it "
        "fit. Without --headless it opens the window. `visual-trainer sweep --help`: hyper-parameter sweeps.",
    )
    _add_mode_options(p)
    _add_network_options(p)
    _add_file_options(p)
    _add_window_options(p)
    return p


def _add_mode_options(p: argparse.ArgumentParser) -> None:
    """Headless or the window, and what a run does besides training."""
    mode = p.add_argument_group("mode")
    mode.add_argument("--headless", action="store_true", help="train without a window and write the results")
    mode.add_argument(
        "--iterations",
        type=int,
        metavar="N",
        help="headless: train until step N, counted from the "
        f"start; after --resume, {MORE_STEPS} steps past its step unless given (default {MORE_STEPS}); "
        "N at the start trains nothing and writes the network as it starts",
    )
    mode.add_argument(
        "--out",
        type=nonempty_text,
        metavar="DIR",
        help="headless output folder (default runs/<timestamp>/); one of another kind (a race's for a run, a "
        "run's for a race, a sweep's) is refused",
    )
    mode.add_argument(
        "--eval-every",
        type=int,
        default=100,
        metavar="K",
        help="headless: evaluate on the grid every K steps (default 100)",
    )
    mode.add_argument(
        "--screenshot",
        type=nonempty_text,
        metavar="PNG",
        help="headless: also render the full window after training into this PNG file",
    )
    mode.add_argument(
        "--variant",
        action="append",
        type=str,
        metavar="FIELDS",
        help='headless: race this variant of the setup, e.g. "hidden=64,64 lr=0.003" (config fields; '
        '"" is the setup itself); 2 to 8 of them train side by side for --iterations equal steps',
    )
    mode.add_argument(
        "--tensorboard",
        type=nonempty_text,
        metavar="DIR",
        help="headless: also write TensorBoard event files into DIR (a race's racers into DIR/<racer>/): the "
        "losses, PSNR or accuracy, samples/s, heatmaps and the config as hparams (the tensorboard extra)",
    )
    mode.add_argument(
        "--tensorboard-images",
        type=int,
        metavar="K",
        help=f"with --tensorboard: the heatmaps of every K-th evaluation and the last as images "
        f"(default {IMAGE_EVERY}; 0: none)",
    )
    mode.add_argument("--quiet", action="store_true", help="headless: no progress bar, loss lines or compile notice")
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
    mode.add_argument(
        "--gpu",
        type=_gpu_choice,
        metavar="INDEX|UUID",
        help="the GPU to run on: its adapter index for the API, or its UUID as nvidia-smi -L prints "
        "it (GPU-xxxxxxxx-...), or 8 or more of its first hex digits (default: the first GPU of "
        "CUDA_VISIBLE_DEVICES where it is set, else SlangPy's choice)",
    )


def _add_network_options(p: argparse.ArgumentParser) -> None:
    """The network and training: a config file, a preset and the Config table's flags."""
    net = p.add_argument_group("network and training (each overrides --preset and --config)")
    net.add_argument(
        "--config",
        type=nonempty_text,
        metavar="FILE",
        help="a JSON config, the summary.json of an earlier run (a race's: its base config) or a sweep's best.json",
    )
    net.add_argument(
        "--preset",
        type=nonempty_text,
        metavar="NAME",
        help=f"start from a preset: {', '.join(config_files.preset_names())}",
    )
    for name, spec in FLAGGED.items():
        net.add_argument(spec.flag.name, **field_option(name, spec))


def _add_file_options(p: argparse.ArgumentParser) -> None:
    """Checkpoints, exports and network files."""
    files = p.add_argument_group("checkpoints and export")
    files.add_argument(
        "--resume",
        type=nonempty_text,
        metavar="CKPT",
        help="continue from a checkpoint: its network, optimizer state, step, config and loss history; "
        f"{_listed([FLAGGED[name].flag.name for name in HOT_OPTIONS])} may change its config; network "
        "options only where they agree with it",
    )
    files.add_argument(
        "--save-checkpoint",
        type=nonempty_text,
        metavar="PATH",
        help="headless: save the whole training state at the end, for --resume",
    )
    files.add_argument(
        "--export-slang",
        type=nonempty_text,
        metavar="PATH",
        help="headless: write the trained network as one standalone .slang file defining trained_network(xy, outputs)",
    )
    files.add_argument(
        "--export-image",
        type=nonempty_text,
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
        "--export-mesh",
        type=nonempty_text,
        metavar="PATH",
        help="headless, --dims 3: write the zero level of the first output as a triangle mesh (.ply or .obj), "
        "by marching cubes over the box, in the box's units or a mesh truth's own (the mesh extra: scikit-image)",
    )
    files.add_argument(
        "--mesh-resolution",
        type=int,
        metavar="N",
        help=f"--export-mesh's lattice: N points along each axis of the box, {MIN_RESOLUTION}-{MAX_RESOLUTION} "
        f"(default {DEFAULT_RESOLUTION})",
    )
    files.add_argument(
        "--load-network",
        type=nonempty_text,
        metavar="JSON",
        help="start training from a network.json written earlier: its structure and weights, fresh optimizer state",
    )


def _add_window_options(p: argparse.ArgumentParser) -> None:
    """The window's size and behaviour."""
    win = p.add_argument_group("window")
    win.add_argument("--width", type=int, help="window width in pixels; else as it last closed (default 1280)")
    win.add_argument("--height", type=int, help="window height in pixels; else as it last closed (default 800)")
    win.add_argument("--no-vsync", action="store_true", help="don't wait for the display's refresh")
    win.add_argument("--fresh", action="store_true", help="ignore the config, layout and autosave of the last session")
    serve = p.add_argument_group("the window in a browser (docs/guide/serve.md)")
    add_serve_options(
        serve,
        "draw the window offscreen and serve it to browsers at this address, with no display needed "
        "(HOST 127.0.0.1 unless given; reach it from elsewhere through an SSH tunnel); prints the URL with its token",
    )
    # The window `visual-trainer sweep --serve` serves (app/sweep/live.py): DIR open in the sweep
    # window and watched, paused, nothing of the last session restored or saved.
    serve.add_argument("--open-sweep", metavar="DIR", help=argparse.SUPPRESS)
    # For tests and scripted screenshots of the real window: after N frames, save the window's
    # frame to --screenshot (or the F12 folder) and keep running.
    win.add_argument("--screenshot-after", type=int, metavar="N", help=argparse.SUPPRESS)


# The options that name a ground truth: at most one of them, and it replaces any other truth the
# config it builds on had (the window's last session, a preset).
TRUTH_OPTIONS = (("--target", "targets"), ("--target-file", "target_file"), ("--image", "image_file"))
TRUTH_OPTIONS += (("--dataset", "dataset_source"), ("--sdf", "sdf"))


def truth_options(args: argparse.Namespace) -> list[str]:
    """The truth options given (`--dataset none`, back to the formulas, names none)."""
    named = [flag for flag, dest in TRUTH_OPTIONS if getattr(args, dest) is not None]
    return [flag for flag in named if not (flag == "--dataset" and args.dataset_source == NO_DATASET)]


def config_from_args(args: argparse.Namespace, base: cfg.Config | None = None) -> cfg.Config:
    """The config the options describe, on `base` (the window's last session; the defaults
    elsewhere). A preset or a config file is a whole starting point: it builds on the defaults,
    not on the last session. One ground truth at most; the one named beats the base's."""
    named = truth_options(args)
    if len(named) > 1:
        raise UserError(f"one ground truth at a time: use {named[0]} or {named[1]}, not both")
    config = cfg.Config() if (args.preset or args.config) else (base or cfg.Config())
    if args.sdf is not None and args.preset is None and args.config is None:
        config = config_files.load_preset(config_files.shape_preset(args.sdf.strip()))  # its options override it
    if args.preset is not None:
        config = config_files.load_preset(args.preset, config)
    if args.config is not None:
        config = config_files.load_file(args.config, config)
    if args.targets is not None:
        config = without_other_truths(config, "targets")
    if args.sdf is not None:
        config = without_other_truths(config, "sdf")
    overrides = {name: getattr(args, name) for name in DIRECT_OPTIONS if getattr(args, name) is not None}
    if args.targets is not None:
        overrides["slang_target"] = None
    if args.features is not None:  # the features are a setting of the feature encoding
        if args.encoding not in (None, "features"):
            raise UserError(f"--features is the feature encoding's setting: use it without --encoding {args.encoding}")
        overrides["encoding"] = "features"
    if args.sdf is not None:  # a silhouette's pixels stay square
        overrides["domain"] = sdf_domain(args.sdf.strip(), overrides.get("domain", config.domain))
        if is_mesh_spec(args.sdf.strip()):  # a mesh is a shape in 3D
            overrides.setdefault("dims", 3)
    config = from_dict(overrides, config, source="options") if overrides else cfg.validate(config)
    if args.dataset_source is not None:
        config = with_dataset(without_other_truths(config, "dataset"), entry_for(args.dataset_source))
    return config


def resolve_start(args: argparse.Namespace, base: cfg.Config | None = None) -> Start:
    """The start the options describe (cli_args has refused contradicting ones). `base` is what
    the options build on without --resume: the defaults, or the window's saved config."""
    if args.resume is not None:
        checkpoint = ckpt.load(args.resume)
        refuse_disagreeing(args, checkpoint.config, config_from_args)  # options that agree with it are accepted
        overrides = {name: getattr(args, name) for name in HOT_OPTIONS if getattr(args, name) is not None}
        config = from_dict(overrides, checkpoint.config, source="options") if overrides else checkpoint.config
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
