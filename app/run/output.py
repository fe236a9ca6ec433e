"""What a headless run leaves behind, written after training: --out's files and the checkpoint,
Slang export and screenshot asked for. A failed write never discards the run: the files go one by
one, the network first, each whole or not at all, and what was trained goes to RESCUE_FOLDER where
its own place refuses it (docs/formats.md, 'Where files go')."""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import first_line
from ..files.atomic import temporary_beside, write_synced
from ..files.mesh_export import DEFAULT_RESOLUTION
from ..files.network_io import TABLES_FILE, export_network, tables_npy
from ..files.run_summary import HeadlessResult, data_entry, loss_csv, summary

SGL_OPEN_FAILED = "I/O error while attempting to open file: "
RESCUE_FOLDER = "rescued"  # under the cache folder: a run's network when --out refused it
WINDOW_DEFAULT = (1280, 800)  # a headless screenshot's size; the window's is app/ui/placement.py's


@dataclass(frozen=True)
class Failure:
    option: str  # "--out", or the option that named the file
    target: Path  # --out's folder, or the file
    name: str  # the file's name (in --out)
    reason: str


@dataclass
class Written:
    """What a run's writing did: the files written and where, and what could not be."""

    files: list[tuple[str, Path]] = field(default_factory=list)  # (option or file name, where), in order
    failures: list[Failure] = field(default_factory=list)
    rescued: list[Path] = field(default_factory=list)  # written to the rescue folder instead
    out_files: int = 0  # files tried in --out (a failure names them unless all failed)

    def error_line(self) -> str | None:
        """The one line a run with failed writes ends with, or None when all were written."""
        if not self.failures:
            return None
        parts = []
        for option in dict.fromkeys(f.option for f in self.failures):
            mine = [f for f in self.failures if f.option == option]
            reasons = sorted({f.reason for f in mine})
            where = f"{option} {str(mine[0].target)!r}"
            if option == "--out" and len(mine) < self.out_files:
                where += f" ({', '.join(f.name for f in mine)})"
            parts.append(f"{where}: {', '.join(reasons)}")
        line = "cannot write " + "; ".join(parts)
        line += "".join(f"; {path.name} went to {path}" for path in self.rescued)
        written = [str(where) for _, where in self.files if where not in self.rescued]
        return line + (f"; written: {', '.join(written)}" if written else "")

    def merge(self, other: Written) -> None:
        """Another write's files and failures after these (a race writes each racer's run)."""
        self.files += other.files
        self.failures += other.failures
        self.rescued += other.rescued
        self.out_files += other.out_files


class _Writer:
    def __init__(self) -> None:
        self.written = Written()
        self._rescue: Path | None = None

    def rescue_folder(self) -> Path:
        if self._rescue is None:
            stamp = f"{datetime.datetime.now():%Y%m%d-%H%M%S}-{os.getpid()}"
            from ..gpu.device import cache_dir  # SlangPy: only where a network must be rescued

            self._rescue = cache_dir() / RESCUE_FOLDER / stamp
        return self._rescue

    def file(self, option: str, target: Path, path: Path, make: Callable[[Path], None], rescue: bool = False) -> None:
        """`make(temporary)` writes the file under a temporary name beside `path`, renamed into
        place once whole. A failure is recorded against `option` and its `target` (--out's
        folder, or the file); with `rescue`, the rescue folder is tried next."""
        written = self.written
        written.out_files += option == "--out"
        for place in (path, self.rescue_folder() / path.name) if rescue else (path,):
            temporary = temporary_beside(place)
            try:
                place.parent.mkdir(parents=True, exist_ok=True)
                make(temporary)
                os.replace(temporary, place)
            except Exception as error:  # OSError, or sgl's RuntimeError from a failed image write
                _remove(temporary)
                if place == path:
                    reason = error.strerror if isinstance(error, OSError) and error.strerror else first_line(error)
                    reason = reason.removeprefix(f"{temporary}: ")  # sgl names the file it wrote
                    reason = reason.removeprefix(SGL_OPEN_FAILED)  # and says it failed before why
                    written.failures.append(Failure(option, target, path.name, reason))
                continue
            written.files.append((option if option != "--out" else path.name, place))
            if place != path:
                written.rescued.append(place)
            return

    def data(self, option: str, target: Path, path: Path, data: bytes, rescue: bool = False) -> None:
        self.file(option, target, path, lambda temporary: write_synced(temporary, data), rescue)


def write_files(out: Path, files: dict[str, bytes]) -> Written:
    """Files of --out by name, each whole or not at all; never raises for a failed write."""
    writer = _Writer()
    for name, data in files.items():
        writer.data("--out", out, out / name, data)
    return writer.written


def _remove(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:  # a folder that refuses even that: nothing was left in it
        pass


def write_run(
    session,
    result: HeadlessResult,
    out: Path,
    asked: dict[str, str | None],
    screen: tuple[int, int] = (1280, 800),
    image_scale: int = 1,
    mesh_resolution: int = DEFAULT_RESOLUTION,
) -> Written:
    """Writes the run's files: --out's, then those `asked` for by option ("--save-checkpoint",
    "--export-slang", "--screenshot" of size `screen`, "--export-image" at `image_scale` times
    the image's resolution, "--export-mesh" on a lattice of `mesh_resolution` points an axis: a
    path or None). Never raises for a failed write."""
    from ..files import checkpoint
    from ..files.export_slang import export_files

    writer, trainer, data = _Writer(), session.trainer, data_entry(session)
    plan, params = trainer.plan, trainer.parameters()
    network = export_network(plan, session.config, params, data)
    writer.data("--out", out, out / "network.json", (json.dumps(network) + "\n").encode(), rescue=True)
    if plan.grid is not None:  # the tables network.json names, beside it
        writer.data("--out", out, out / TABLES_FILE, tables_npy(plan, params), rescue=True)
    if asked.get("--save-checkpoint"):
        path = Path(asked["--save-checkpoint"])
        writer.data("--save-checkpoint", path, path, checkpoint.encode(checkpoint.capture(session)), rescue=True)
    text = (json.dumps(summary(session, result), indent=2) + "\n").encode()
    writer.data("--out", out, out / "summary.json", text)
    writer.data("--out", out, out / "loss.csv", loss_csv(session))
    if trainer.data is not None:
        writer.data("--out", out, out / "split.csv", trainer.data.dataset.split_csv())
    if asked.get("--export-slang"):  # the .slang file, and a grid's tables beside it
        path = Path(asked["--export-slang"])
        for file, contents in export_files(trainer, path, data):
            writer.data("--export-slang", path, file, contents)
    writer.file("--out", out, out / "heatmaps.png", lambda temporary: _heatmaps(session, temporary))
    if session.image is not None:  # the learned image at the input's resolution (summary.json's psnr)
        writer.file("--out", out, out / "learned.png", lambda temporary: _png(temporary, session.image.learned()))
    if asked.get("--export-image"):
        path = Path(asked["--export-image"])
        # rendered inside the write: a failure is that file's, and the files after it are still tried
        writer.file("--export-image", path, path, lambda temporary: _png(temporary, session.image.render(image_scale)))
    if asked.get("--export-mesh"):  # marched inside the write: no zero level is that file's failure
        path = Path(asked["--export-mesh"])
        writer.file("--export-mesh", path, path, lambda temporary: _mesh(trainer, temporary, path, mesh_resolution))
    if asked.get("--screenshot"):
        path = Path(asked["--screenshot"])
        writer.file("--screenshot", path, path, lambda temporary: _screenshot(session, temporary, screen))
    return writer.written


def _png(path: Path, pixels) -> None:
    from ..views.image_eval import write_png

    write_png(path, pixels)


def _mesh(trainer, temporary: Path, path: Path, resolution: int) -> None:
    from ..files.mesh_export import export_mesh

    write_synced(temporary, export_mesh(trainer, path, resolution)[0])


def _heatmaps(session, path: Path) -> None:
    from ..ui.report import write_run_heatmaps  # imgui only when a picture is wanted

    write_run_heatmaps(session, path)


def _screenshot(session, path: Path, screen: tuple[int, int]) -> None:
    from ..ui.offscreen import render_screenshot

    render_screenshot(session, str(path), *screen)
