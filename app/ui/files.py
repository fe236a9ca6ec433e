"""The File menu's dialogs (open an image, a shape, a CSV or a sweep; save, load and export): native
dialogs from portable_file_dialogs, polled once a frame so the window keeps drawing while one is
open. On Linux they are zenity or kdialog; without either the window asks for the path itself
(path_prompt.py), the field filled in with the cache folder or the working folder."""

from __future__ import annotations

import datetime
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from imgui_bundle import portable_file_dialogs as pfd

from ..errors import UserError, first_line
from ..files import autosave, checkpoint
from ..files.atomic import write_atomic
from ..files.export_slang import export_files
from ..files.mesh_export import check_mesh_path, export_mesh
from ..files.network_io import TABLES_FILE, export_network, tables_npy
from ..files.run_summary import data_entry
from ..gpu.device import cache_dir
from ..truth import image_truth
from .dropped_files import drop_action, refusal

DIALOG_PROGRAMS = ("zenity", "matedialog", "qarma", "kdialog")  # what portable_file_dialogs runs on Linux
ERROR_SECONDS = 10.0
CHECKPOINT_FILTER = ["Checkpoints (*.ckpt)", "*.ckpt", "All files", "*"]
IMAGE_FILTER = ["Images (*.png *.jpg *.jpeg)", "*.png *.jpg *.jpeg", "All files", "*"]
SHAPE_FILTER = [
    "Shapes (*.svg *.png *.jpg *.jpeg *.csv *.obj *.off *.stl *.ply)",
    "*.svg *.png *.jpg *.jpeg *.csv *.obj *.off *.stl *.ply",
    "All files",
    "*",
]
SLANG_FILTER = ["Slang (*.slang)", "*.slang"]
CSV_FILTER = ["CSV (*.csv)", "*.csv", "All files", "*"]
NETWORK_FILTER = ["network.json (*.json)", "*.json"]
MESH_FILTER = ["Meshes (*.ply *.obj)", "*.ply *.obj"]


def dialogs_available() -> bool:
    return not sys.platform.startswith("linux") or any(shutil.which(p) for p in DIALOG_PROGRAMS)


def _with_suffix(path: str, suffix: str) -> Path:
    """A name typed without an extension gets `suffix` (`import` needs .slang, for one)."""
    chosen = Path(path)
    return chosen if chosen.suffix else chosen.with_suffix(suffix)


@dataclass(frozen=True)
class FileAction:
    """One of File's actions on a path: its dialog (or the path field, without a dialog program)
    and the FileActions method that acts on the path chosen."""

    title: str  # the dialog's and the path field's title
    button: str  # the path field's button
    filters: tuple[str, ...]
    method: str  # FileActions' method taking the path
    new_file: str = ""  # a save dialog's suggested name ({step}: the current step); "" opens a file
    folder: bool = False  # a folder is chosen, not a file


ACTIONS = {
    "save": FileAction("Save checkpoint", "Save", tuple(CHECKPOINT_FILTER), "save", "visual-trainer-{step}.ckpt"),
    "load": FileAction("Load checkpoint", "Load", tuple(CHECKPOINT_FILTER), "load"),
    "export": FileAction("Export Slang", "Export", tuple(SLANG_FILTER), "export", "trained_network.slang"),
    "network": FileAction("Save network.json", "Save", tuple(NETWORK_FILTER), "save_network", "network.json"),
    "mesh": FileAction("Export mesh", "Export", tuple(MESH_FILTER), "export_mesh", "learned_surface.ply"),
    "image": FileAction("Open image", "Open", tuple(IMAGE_FILTER), "open_image"),
    "shape": FileAction("Open shape", "Open", tuple(SHAPE_FILTER), "open_shape"),
    "csv": FileAction("Load CSV of points", "Load", tuple(CSV_FILTER), "load_csv"),
    "sweep": FileAction("Open sweep", "Open", (), "open_sweep", folder=True),
}


@dataclass
class PathPrompt:
    """The in-app path field shown instead of a dialog program."""

    action: str  # a key of ACTIONS
    text: str
    error: str = ""  # why the last path typed was not taken
    focus: bool = True


class FileActions:
    def __init__(self, app):
        self.app = app
        self.pending: tuple[str, object] | None = None  # (action, open dialog)
        self.prompt: PathPrompt | None = None  # without a dialog program
        self.dropped: list[str] = []  # files dropped on the window, opened at the next poll

    # ---- requests from the menu ------------------------------------------------------------
    def request(self, action: str) -> None:
        """`action` is a key of ACTIONS; one dialog at a time. Served to a browser (app.remote),
        the path field asks, with an upload from the browser beside it."""
        if self.pending is not None or self.prompt is not None:
            return
        if self.app.remote is not None or not dialogs_available():
            self._without_dialog(action)
            return
        kind = ACTIONS[action]
        if kind.folder:
            dialog = pfd.select_folder(kind.title, str(Path.cwd()))
        elif kind.new_file:
            name = kind.new_file.format(step=self.app.session.trainer.step)
            dialog = pfd.save_file(kind.title, str(Path.cwd() / name), list(kind.filters))
        else:
            dialog = pfd.open_file(kind.title, str(Path.cwd()), list(kind.filters))
        self.pending = (action, dialog)

    def drop(self, paths) -> None:
        """Files dropped on the window: the first opens at the next poll, outside the window's
        event callback (dropped_files.py says which action opens it)."""
        self.dropped = [str(path) for path in paths]

    def open_dropped(self, paths: list[str]) -> str | None:
        """The first of `paths` opened by the action its suffix names: None when done, or why
        not (the running network is kept either way)."""
        path = paths[0]
        action = drop_action(path, self.app.config.sdf is not None)
        if action is None:
            return self._failed(refusal(path))
        problem = self.act(action, path)
        if problem is None and len(paths) > 1:  # what the action said, and what was left
            notice = getattr(self.app, "notice", None)
            said = f"{notice[0]} " if notice else ""
            self.app.say(f"{said}(one file at a time: {len(paths) - 1} other dropped file(s) left)")
        return problem

    def poll(self) -> None:
        """Once a frame: opens what was dropped, and acts on a dialog that has closed (an empty
        answer is a cancel)."""
        if self.dropped:
            dropped, self.dropped = self.dropped, []
            self.open_dropped(dropped)
        if self.pending is None:
            return
        action, dialog = self.pending
        if not dialog.ready(0):
            return
        self.pending = None
        answer = dialog.result()
        path = (answer[0] if answer else "") if isinstance(answer, list) else answer
        if path:
            self.act(action, path)

    def act(self, action: str, path: str) -> str | None:
        """`action` on `path`: None when done, or why not."""
        return getattr(self, ACTIONS[action].method)(path)

    def _without_dialog(self, action: str) -> None:
        self.prompt = PathPrompt(action, str(_default_path(action)))

    def submit_prompt(self) -> None:
        """The path field's Enter: the action on its path; a failure keeps the field open."""
        prompt = self.prompt
        path = prompt.text.strip()
        if not path:
            prompt.error = "type a path"
            return
        problem = self.act(prompt.action, path)
        if problem is None:
            self.prompt = None
        else:
            prompt.error = problem

    # ---- the actions -----------------------------------------------------------------------
    # Each returns None when done, or why not (also shown as the notice).
    def _failed(self, message: str) -> str:
        self.app.say(message, ERROR_SECONDS)
        return message

    def _offer(self, *paths: Path) -> None:
        """Served to a browser: what was just written downloads to the user's machine too."""
        if self.app.remote is not None:
            for path in paths:
                self.app.remote.offer_download(path)

    def save(self, path: str) -> str | None:
        target = _with_suffix(path, ".ckpt")
        try:
            checkpoint.save(target, checkpoint.capture(self.app.session))
        except OSError as error:
            return self._failed(f"checkpoint not saved: {error.strerror or error} ({target})")
        self.app.say(f"checkpoint saved: {target}")
        self._offer(target)
        return None

    def _write(self, files: list[tuple[Path, bytes]], done: str, failed: str) -> str | None:
        """Writes `files` whole (the first one's folder made), says `done` and offers them; or
        says why not, as `failed`: the reason (the first file)."""
        target = files[0][0]
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            for file, data in files:
                write_atomic(file, data)
        except OSError as error:
            return self._failed(f"{failed}: {error.strerror or error} ({target})")
        self.app.say(f"{done}: {target}")
        self._offer(*(file for file, _ in files))
        return None

    def save_network(self, path: str) -> str | None:
        """network.json as a headless run's --out writes it (with a grid's tables beside it)."""
        target = _with_suffix(path, ".json")
        session = self.app.session
        plan, params = session.trainer.plan, session.trainer.parameters()
        network = export_network(plan, session.config, params, data_entry(session))
        files = [(target, (json.dumps(network) + "\n").encode())]
        if plan.grid is not None:
            files.append((target.parent / TABLES_FILE, tables_npy(plan, params)))
        return self._write(files, "network saved", "network.json not saved")

    def export(self, path: str) -> str | None:
        session = self.app.session
        target = _with_suffix(path, ".slang")
        files = export_files(session.trainer, target, data_entry(session))  # a grid's tables beside it
        return self._write(files, "Slang exported", "Slang not exported")

    def export_mesh(self, path: str) -> str | None:
        """The learned zero level as a mesh, as --export-mesh writes it at its default lattice (a
        step under way is finished first: no half-updated network is marched)."""
        target = _with_suffix(path, ".ply")
        session = self.app.session
        try:
            check_mesh_path(str(target), "the path")
            session.complete_step()
            data, vertices, faces = export_mesh(session.trainer, target)
        except UserError as error:
            return self._failed(f"mesh not exported: {first_line(error)}")
        return self._write(
            [(target, data)], f"mesh exported ({vertices:,} vertices, {faces:,} faces)", "mesh not exported"
        )

    def open_image(self, path: str) -> str | None:
        """An image as the new truth, over the domain that keeps its aspect ratio; built in the
        background as Apply does. A file that is not a usable image is a message, and the
        current network trains on."""
        try:
            info, _ = image_truth.load(path)
            config = self.app.config.replace(
                image=info, slang_target=None, sdf=None, domain=image_truth.aspect_domain(info["width"], info["height"])
            )
            self.app.session.start_rebuild(config)
        except UserError as error:
            return self._failed(f"image not opened: {first_line(error)}")
        self.app.say(f"building the network for {Path(path).name} ({info['width']}x{info['height']})...")
        return None

    def open_shape(self, path: str) -> str | None:
        """A shape's signed distance as the new truth (app/ui/shape_edits.py); a file that is no
        shape is a message, and the current network trains on."""
        problem = self.app.shapes.choose(path)
        if problem is not None:
            return self._failed(f"shape not opened: {problem}")
        self.app.say(self.app.shapes.building_note())
        return None

    def load_csv(self, path: str) -> None:
        """A CSV of points, read in the background (app/ui/data_edits.py reports a bad one)."""
        self.app.data.load_csv(path)

    def open_sweep(self, path: str) -> str | None:
        """A sweep's folder in the sweep window (app/ui/sweep/); one that is not is a message."""
        return self.app.sweep.open_folder(path)

    def load(self, path: str) -> str | None:
        """The current network stays unless the file is a valid checkpoint; one of another
        compiled network (another architecture, or a derivative term on or off) is built in the
        background first, as Apply does, then put in."""
        try:
            saved = checkpoint.load(path)
        except UserError as error:
            return self._failed(f"not loaded: {error}")
        return self.put_in(saved, f"checkpoint loaded: step {saved.step:,}")

    def put_in(self, saved: checkpoint.Checkpoint, done: str, building: str = "the checkpoint's network") -> str | None:
        """`saved` becomes the session's state (a checkpoint loaded, a racer kept), saying `done`
        once it is in; a network of another structure is built in the background first."""
        session = self.app.session
        if session.gpu.plan(saved.config) == session.trainer.plan:
            session.cancel_rebuild()
            checkpoint.restore(session, saved)
            self.app.on_new_network()
            self.app.say(done)
            return None

        def put_in(rebuilt) -> None:
            checkpoint.restore(rebuilt, saved)
            self.app.say(done)

        try:
            session.start_rebuild(saved.config, then=put_in)
        except UserError as error:
            return self._failed(f"not loaded: {first_line(error)}")
        self.app.say(f"building {building}...")
        return None


OPENED_NAMES = {"image": "image.png", "shape": "shape.svg", "csv": "points.csv"}  # the path field's start


def _default_path(action: str) -> Path:
    """What the path field starts with: a new file in the cache folder to save or export to (the
    folder made where it can be), the newest checkpoint there to load."""
    if action == "sweep":  # a folder of the user's: the working folder, where `sweep --out` wrote it
        return Path.cwd()
    if action in OPENED_NAMES:  # something of the user's to open: from the working folder
        return Path.cwd() / OPENED_NAMES[action]
    stamp = f"{datetime.datetime.now():%Y%m%d-%H%M%S}"
    folder = cache_dir() / ("exports" if action in ("export", "network", "mesh") else "checkpoints")
    if action == "load":
        found = [p for p in folder.glob("*.ckpt") if p.is_file()] + [k.path for k in autosave.kept_sessions()]
        return max(found, key=lambda p: p.stat().st_mtime) if found else Path.cwd() / "run.ckpt"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        folder = Path.cwd()
    names = {
        "export": f"trained_network_{stamp}.slang",
        "network": f"network_{stamp}/network.json",
        "mesh": f"learned_surface_{stamp}.ply",
    }
    name = names.get(action, f"visual-trainer-{stamp}.ckpt")
    return folder / name
