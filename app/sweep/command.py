"""`visual-trainer sweep SPACE --out DIR` and `visual-trainer sweep --resume DIR`: the options,
the checks made before anything is written or Ray starts (the space file, the folder, Ray and
Optuna installed, --serve's address), the sweep folder's space.json, --serve's window (live.py)
and the last line. app/entry/cli.py hands every command line that starts with `sweep` here. Bad
input is one line on stderr and exit 2."""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import importlib.util
import json
import socket
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import EXIT_INTERRUPTED, EXIT_USAGE, UserError, counted
from ..files.sweep_folder import FINISHED_STATES
from ..files.tensorboard_events import IMAGE_EVERY, TensorboardOptions
from ..files.tensorboard_events import check_options as check_tensorboard
from ..files.writable import check_output_dir
from ..gpu.device import DEVICE_TYPES
from ..serve.address import add_serve_options
from .live import ServedSweep, ServeRequest
from .space import Space, read_space
from .table import BEST_FILE, TRIALS_FILE, trial_name

SPACE_FILE = "space.json"
ADDRESS_TIMEOUT_S = 5
NEEDED = ("ray", "optuna")
INSTALL_HINT = "pip install 'slang-visual-trainer[sweep]' (in a checkout: .venv/bin/pip install -e '.[sweep]')"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # one line, no usage dump
        raise UserError(message)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="visual-trainer sweep",
        description="Search hyper-parameters: Ray Tune runs headless trials with values Optuna picks "
        "from the space file, and stops poor ones early. docs/guide/sweeps.md has the file's format.",
    )
    p.add_argument("space", nargs="?", metavar="SPACE", help="the space file, JSON or TOML (.toml)")
    p.add_argument("--out", metavar="DIR", help="the sweep folder to make (it must not exist, or be empty)")
    p.add_argument("--resume", metavar="DIR", help="go on with the sweep in DIR: runs the trials it still lacks")
    p.add_argument(
        "--address",
        metavar="ADDR",
        help="run on a Ray cluster this machine is a node of ('auto', or its head's HOST:PORT) instead of "
        "starting Ray here; DIR must be on a file system every node sees",
    )
    p.add_argument(
        "--trials-per-gpu", type=int, default=1, metavar="K", help="trials sharing each GPU at once (default 1)"
    )
    p.add_argument(
        "--device",
        default="auto",
        choices=tuple(DEVICE_TYPES),
        help="each trial's GPU API (default auto). Several trials a GPU run side by side with cuda under "
        "NVIDIA's MPS daemon; on Vulkan they take turns",
    )
    p.add_argument(
        "--eval-every",
        type=int,
        default=100,
        metavar="K",
        help="each trial evaluates every K steps, where the pruner may stop it (default 100)",
    )
    p.add_argument(
        "--tensorboard",
        metavar="DIR",
        help="also write TensorBoard event files, each trial's into DIR/<trial>/, its searched fields as hparams "
        "and the sweep's metric (the tensorboard extra); with --resume, give it again",
    )
    p.add_argument(
        "--tensorboard-images",
        type=int,
        metavar="K",
        help=f"with --tensorboard: the heatmaps of every K-th evaluation and the last as images "
        f"(default {IMAGE_EVERY}; 0: none)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    serve = p.add_argument_group("the sweep in a browser (docs/guide/serve.md, 'A sweep, live')")
    add_serve_options(
        serve,
        "while the trials run, serve the window with the sweep open in it to browsers at this address "
        "(each trial shown as it finishes; Train again trains one there); prints the URL with its token",
    )
    return p


def _folder_and_space(args: argparse.Namespace) -> tuple[Path, Space, bool]:
    """The sweep folder, its space, and whether it is new; every check before anything is written."""
    if args.resume is not None:
        if args.space is not None or args.out is not None:
            raise UserError("--resume DIR takes the space from DIR/space.json: give no SPACE file or --out")
        folder = Path(args.resume)
        if not (folder / SPACE_FILE).is_file():
            raise UserError(f"--resume {str(folder)!r}: no sweep there (no {SPACE_FILE})")
        return folder, read_space(folder / SPACE_FILE), False
    if args.space is None or args.out is None:
        raise UserError("a sweep needs a space file and --out DIR: visual-trainer sweep SPACE --out DIR")
    folder = Path(args.out)
    space = read_space(args.space)
    if (folder / SPACE_FILE).exists():
        raise UserError(f"--out {str(folder)!r} holds a sweep already: --resume {str(folder)!r} goes on with it")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UserError(f"--out {str(folder)!r} exists and is not an empty folder")
    check_output_dir(folder)
    return folder, space, True


def _check_options(args: argparse.Namespace) -> None:
    if args.trials_per_gpu < 1:
        raise UserError(f"--trials-per-gpu must be at least 1 (got {args.trials_per_gpu})")
    if args.eval_every < 1:
        raise UserError(f"--eval-every must be at least 1 (got {args.eval_every})")
    check_tensorboard(args.tensorboard, args.tensorboard_images)
    if args.address is not None:
        _check_address(args.address)
    missing = [name for name in NEEDED if not _installed(name)]
    if missing:
        raise UserError(f"sweeps need Ray Tune and Optuna ({' and '.join(missing)} missing): {INSTALL_HINT}")
    _check_serve(args)


def _check_serve(args: argparse.Namespace) -> None:
    """--serve's address, token file and TLS files, checked as the window checks them (it checks
    them again), before anything is written."""
    if args.serve is None:
        for option in ("--token-file", "--certfile", "--keyfile"):
            if getattr(args, option[2:].replace("-", "_")) is not None:
                raise UserError(f"{option} is for --serve")
        return
    from ..serve.address import serve_address
    from ..serve.requirements import check_serve_packages

    check_serve_packages()
    serve_address(args.serve, args.token_file, args.certfile, args.keyfile)


def _serve_request(args: argparse.Namespace) -> ServeRequest | None:
    if args.serve is None:
        return None
    return ServeRequest(args.serve, args.token_file, args.certfile, args.keyfile, args.device)


def _check_address(address: str) -> None:
    """A cluster to join: 'auto' (Ray finds the one this machine runs), or HOST:PORT, which must
    answer (Ray itself would retry an address that does not, for minutes). Ray Client's ray://
    is refused: through it Tune runs the sweep's driver on the cluster's head node, where the
    journal, the tables and the progress bar would be, not here."""
    if address.startswith("ray://"):
        raise UserError(
            f"--address {address}: Ray Client (ray://) is not supported; run the sweep on a node of the "
            "cluster with --address auto"
        )
    if address == "auto":
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"--address must be 'auto' or HOST:PORT (got {address!r})")
    try:
        socket.create_connection((host, int(port)), timeout=ADDRESS_TIMEOUT_S).close()
    except OSError as error:
        raise UserError(f"--address {address}: no Ray cluster answers there ({error.strerror or error})") from None


def _installed(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
        return False


def _start_folder(folder: Path, space: Space) -> None:
    from ..files.atomic import write_atomic

    try:
        folder.mkdir(parents=True, exist_ok=True)
        write_atomic(folder / SPACE_FILE, (json.dumps(space.document, indent=2) + "\n").encode())
    except OSError as error:
        raise UserError(f"cannot write --out {str(folder)!r}: {error.strerror or error}") from None


@contextlib.contextmanager
def _only_sweep(folder: Path) -> Iterator[None]:
    """An exclusive lock on DIR/space.json while this sweep runs: a second sweep of the same
    folder would close this one's running trials as interrupted, and run trials of its own."""
    with open(folder / SPACE_FILE, "rb") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise UserError(f"{str(folder)!r} is in use by another sweep: wait for it to end, or stop it") from None
        yield


def _report(folder: Path, space: Space, outcome) -> int:
    """The sweep's last line: what ran and the best trial, or how to resume an interrupted sweep."""
    states = [record.state for record in outcome.finished]
    counts = ", ".join(f"{states.count(state)} {state}" for state in FINISHED_STATES)
    if outcome.interrupted:
        left = len(outcome.records) - len(states)
        again = f"; {left} interrupted, to run again" if left else ""
        print(
            f"interrupted: {len(states)} of {counted(space.trials, 'trial')} finished ({counts}{again}), in {folder / TRIALS_FILE}; "
            f"visual-trainer sweep --resume {folder} runs the rest",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    best = outcome.best
    if best is None:
        print(f"done: {counted(len(states), 'trial')} ({counts}), none complete: {folder / TRIALS_FILE} says why")
    else:
        print(
            f"done: {counted(len(states), 'trial')} ({counts}); best: trial {trial_name(best.number)}, "
            f"{space.metric} {best.value:.6g} -> {folder / BEST_FILE}"
        )
    return 0


def main(argv: Sequence[str]) -> int:
    """`argv`: what follows `sweep` on the command line."""
    try:
        args = build_parser().parse_args(argv)
        folder, space, new = _folder_and_space(args)
        _check_options(args)
        return _sweep(args, folder, space, new)
    except UserError as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE


def _sweep(args: argparse.Namespace, folder: Path, space: Space, new: bool) -> int:
    try:
        from . import driver  # Ray and Optuna: only once everything is checked

        driver.quiet_libraries()
        with ServedSweep(_serve_request(args), folder) as served:  # --serve's window, stopped however this ends
            if new:
                served.start()  # before Ray and the folder: a port in use leaves nothing
                driver.start_ray(args.address)  # before the folder: a Ray that cannot start leaves none
                _start_folder(folder, space)
            with _only_sweep(folder):
                if not new:
                    outcome = driver.outcome_in(folder, space)
                    if not outcome.interrupted:
                        return _report(folder, space, outcome)
                    served.start()
                    driver.start_ray(args.address)
                tensorboard = TensorboardOptions.of(args.tensorboard, args.tensorboard_images)
                options = driver.SweepOptions(
                    args.trials_per_gpu, args.eval_every, args.quiet, args.device, tensorboard
                )
                outcome = driver.run_sweep(folder, space, options)
    except KeyboardInterrupt:  # before Tune's own handling of Ctrl+C, or a second one
        started = (folder / SPACE_FILE).exists()
        what = f"visual-trainer sweep --resume {folder} runs the rest" if started else "nothing was written"
        print(f"interrupted: {what}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return _report(folder, space, outcome)
