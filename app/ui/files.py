"""File > Open image, Save checkpoint, Load checkpoint, Export Slang and Load CSV: native file dialogs from
portable_file_dialogs, polled once a frame so that the window keeps drawing while one is open,
then the core's image, checkpoint and export code.

On Linux the dialogs are zenity or kdialog run as programs. Where neither is installed, saving
and exporting go to the app's cache folder (as F12 screenshots do) and the notice says where;
loading then needs --resume (an image, --image; a CSV, --dataset), and the notice says so."""

from __future__ import annotations

import datetime
import shutil
import sys
from pathlib import Path

from imgui_bundle import portable_file_dialogs as pfd

from .. import checkpoint, image_truth
from ..atomic import write_atomic
from ..device import cache_dir
from ..errors import UserError, first_line
from ..export_slang import export_files
from ..headless import data_entry

DIALOG_PROGRAMS = ("zenity", "matedialog", "qarma", "kdialog")  # what portable_file_dialogs runs on Linux
ERROR_SECONDS = 10.0
CHECKPOINT_FILTER = ["Checkpoints (*.ckpt)", "*.ckpt", "All files", "*"]
IMAGE_FILTER = ["Images (*.png *.jpg *.jpeg)", "*.png *.jpg *.jpeg", "All files", "*"]
SLANG_FILTER = ["Slang (*.slang)", "*.slang"]
CSV_FILTER = ["CSV (*.csv)", "*.csv", "All files", "*"]


def dialogs_available() -> bool:
    return not sys.platform.startswith("linux") or any(shutil.which(p) for p in DIALOG_PROGRAMS)


def _with_suffix(path: str, suffix: str) -> Path:
    """A name typed without an extension gets `suffix` (`import` needs .slang, for one)."""
    chosen = Path(path)
    return chosen if chosen.suffix else chosen.with_suffix(suffix)


class FileActions:
    def __init__(self, app):
        self.app = app
        self.pending: tuple[str, object] | None = None  # (action, open dialog)

    # ---- requests from the menu ------------------------------------------------------------
    def request(self, action: str) -> None:
        """`action` is "save", "load", "export" or "csv"; one dialog at a time."""
        if self.pending is not None:
            return
        if not dialogs_available():
            self._without_dialog(action)
            return
        step = self.app.session.trainer.step
        if action == "save":
            dialog = pfd.save_file(
                "Save checkpoint", str(Path.cwd() / f"visual-trainer-{step}.ckpt"), CHECKPOINT_FILTER
            )
        elif action == "export":
            dialog = pfd.save_file("Export Slang", str(Path.cwd() / "trained_network.slang"), SLANG_FILTER)
        elif action == "csv":
            dialog = pfd.open_file("Load CSV of points", str(Path.cwd()), CSV_FILTER)
        elif action == "image":
            dialog = pfd.open_file("Open image", str(Path.cwd()), IMAGE_FILTER)
        else:
            dialog = pfd.open_file("Load checkpoint", str(Path.cwd()), CHECKPOINT_FILTER)
        self.pending = (action, dialog)

    def poll(self) -> None:
        """Once a frame: acts on a dialog that has closed (an empty answer is a cancel)."""
        if self.pending is None:
            return
        action, dialog = self.pending
        if not dialog.ready(0):
            return
        self.pending = None
        answer = dialog.result()
        path = (answer[0] if answer else "") if isinstance(answer, list) else answer
        if path:
            actions = {"save": self.save, "load": self.load, "export": self.export}
            actions |= {"csv": self.app.data.load_csv, "image": self.open_image}
            actions[action](path)

    def _without_dialog(self, action: str) -> None:
        missing = "no file dialog program (install zenity or kdialog)"
        if action in ("load", "image"):
            option = "--resume FILE to load a checkpoint" if action == "load" else "--image FILE to open an image"
            self.app.say(f"{missing}: start the app with {option}", ERROR_SECONDS)
            return
        if action == "csv":
            self.app.say(f"{missing}: start the app with --dataset FILE.csv to load points", ERROR_SECONDS)
            return
        folder = cache_dir() / ("checkpoints" if action == "save" else "exports")
        stamp = f"{datetime.datetime.now():%Y%m%d-%H%M%S}"
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            self.app.say(f"{missing}, and {folder} cannot be made: {error.strerror or error}", ERROR_SECONDS)
            return
        if action == "save":
            self.save(str(folder / f"visual-trainer-{stamp}.ckpt"), f"{missing}; ")
        else:
            self.export(str(folder / f"trained_network_{stamp}.slang"), f"{missing}; ")

    # ---- the actions -----------------------------------------------------------------------
    def save(self, path: str, note: str = "") -> None:
        target = _with_suffix(path, ".ckpt")
        try:
            checkpoint.save(target, checkpoint.capture(self.app.session))
        except OSError as error:
            self.app.say(f"checkpoint not saved: {error.strerror or error} ({target})", ERROR_SECONDS)
            return
        self.app.say(f"{note}checkpoint saved: {target}")

    def export(self, path: str, note: str = "") -> None:
        target = _with_suffix(path, ".slang")
        try:
            session = self.app.session
            for file, data in export_files(session.trainer, target, data_entry(session)):  # a grid's tables beside it
                write_atomic(file, data)
        except OSError as error:
            self.app.say(f"Slang not exported: {error.strerror or error} ({target})", ERROR_SECONDS)
            return
        self.app.say(f"{note}Slang exported: {target}")

    def open_image(self, path: str) -> None:
        """An image as the new truth, over the domain that keeps its aspect ratio; built in the
        background as Apply does. A file that is not a usable image is a message, and the
        current network trains on."""
        try:
            info, _ = image_truth.load(path)
            config = self.app.config.replace(
                image=info, slang_target=None, domain=image_truth.aspect_domain(info["width"], info["height"])
            )
            self.app.session.start_rebuild(config)
        except UserError as error:
            self.app.say(f"image not opened: {first_line(error)}", ERROR_SECONDS)
            return
        self.app.say(f"building the network for {Path(path).name} ({info['width']}x{info['height']})...")

    def load(self, path: str) -> None:
        """The current network stays unless the file is a valid checkpoint; one of another
        architecture is built in the background first, as Apply does, then put in."""
        try:
            saved = checkpoint.load(path)
        except UserError as error:
            self.app.say(f"not loaded: {error}", ERROR_SECONDS)
            return
        session = self.app.session
        if saved.config.structure() == session.config.structure():
            session.cancel_rebuild()
            checkpoint.restore(session, saved)
            self.app.on_new_network()
            self.app.say(f"checkpoint loaded: step {saved.step:,}")
            return

        def put_in(rebuilt) -> None:
            checkpoint.restore(rebuilt, saved)
            self.app.say(f"checkpoint loaded: step {saved.step:,}")

        try:
            session.start_rebuild(saved.config, then=put_in)
        except UserError as error:
            self.app.say(f"not loaded: {first_line(error)}", ERROR_SECONDS)
            return
        self.app.say("building the checkpoint's network...")
