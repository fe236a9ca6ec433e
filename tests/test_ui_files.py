"""File > Save checkpoint, Load checkpoint and Export Slang in the offscreen UI, clicked as a user
would, with the native dialog replaced by a fake that answers with a path: what is saved is
the session's state, what is loaded replaces it exactly (rebuilding another architecture
first), and a bad file changes nothing and says why."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
import numpy as np
import pytest
from sweep_folders import screenshot_rows, write_sweep
from test_ui_offscreen import _centre

from app.config.config import Config, validate
from app.files import checkpoint as ckpt
from app.files.export_slang import trainer_source
from app.files.network_io import load_network
from app.loop.session import Session
from app.resources import asset
from app.ui import files
from app.ui.offscreen import OffscreenApp


class FakeDialog:
    """portable_file_dialogs' dialog: not ready for a frame or two, then the user's answer."""

    def __init__(self, answer, frames: int = 2):
        self.answer, self.frames = answer, frames

    def ready(self, timeout: int = 20) -> bool:
        self.frames -= 1
        return self.frames < 0

    def result(self):
        return self.answer


class FakePfd:
    def __init__(self):
        self.answers: list = []
        self.opened: list[str] = []

    def save_file(self, title, default_path="", filters=None):
        self.opened.append(title)
        return FakeDialog(self.answers.pop(0))

    def open_file(self, title, default_path="", filters=None):
        self.opened.append(title)
        return FakeDialog([self.answers.pop(0)] if self.answers[0] else [])

    def select_folder(self, title, default_path=""):
        self.opened.append(title)
        return FakeDialog(self.answers.pop(0))


def install_fake_dialogs(monkeypatch) -> FakePfd:
    """The window's file dialogs answered by a FakePfd (returned), as if a dialog program ran."""
    fake = FakePfd()
    monkeypatch.setattr(files, "pfd", fake)
    monkeypatch.setattr(files, "dialogs_available", lambda: True)
    return fake


@pytest.fixture
def dialogs(monkeypatch):
    return install_fake_dialogs(monkeypatch)


@pytest.fixture
def ui(make_session):
    app = OffscreenApp(make_session(seed=2), 1280, 800)
    app.frame(3)
    yield app
    app.close()


def _choose(ui, action: str, frames: int = 4) -> None:
    """File > the item for `action`, then a few frames for the dialog to answer."""
    ui.click(*_centre(ui, "menu file"))
    ui.click(*_centre(ui, f"file {action}"))
    ui.frame(frames)


def _state(session: Session):
    t = session.trainer
    return t.parameters(), t.gpu.read(t.optimizer_state, 2 * t.plan.param_count), t.step, t.config


def test_save_writes_the_sessions_state(ui, dialogs, tmp_path):
    dialogs.answers.append(str(tmp_path / "run"))  # typed without an extension
    ui.app.running = False
    _choose(ui, "save")
    saved = ckpt.load(tmp_path / "run.ckpt")
    params, moments, step, config = _state(ui.session)
    assert dialogs.opened == ["Save checkpoint"]
    assert step > 0 and saved.step == step and saved.config == config
    assert np.array_equal(saved.master, params) and np.array_equal(saved.optimizer_state, moments)
    assert "checkpoint saved" in ui.app.notice[0]


def test_export_writes_the_current_network(ui, dialogs, tmp_path):
    dialogs.answers.append(str(tmp_path / "net.slang"))
    ui.app.running = False
    _choose(ui, "export")
    assert (tmp_path / "net.slang").read_text() == trainer_source(ui.session.trainer)
    assert "Slang exported" in ui.app.notice[0]


def test_cancel_does_nothing(ui, dialogs, tmp_path):
    dialogs.answers += ["", ""]
    _choose(ui, "save")
    _choose(ui, "load")
    assert list(tmp_path.iterdir()) == [] and ui.app.files.pending is None


LOADED = {  # the checkpoint's fields besides seed 9 and lr 0.02
    "same architecture": dict(hidden=[16]),
    "another architecture": dict(hidden=[6, 5]),
    # the same structure, but a weight above 0 picks the derivative kernel: it is built first
    "a derivative loss": dict(hidden=[16], grad_weight=0.5),
}


@pytest.mark.parametrize("fields", LOADED.values(), ids=LOADED.keys())
def test_load_puts_the_checkpoint_in(ui, dialogs, gpu, tmp_path, fields):
    source = Session(gpu, validate(Config(**fields, seed=9, lr=0.02, optimizer="adam")), grid=64)
    source.advance(12)
    ckpt.save(tmp_path / "other.ckpt", ckpt.capture(source))
    expected = _state(source)
    dialogs.answers.append(str(tmp_path / "other.ckpt"))
    ui.app.running = False
    _choose(ui, "load")
    for _ in range(400):  # another architecture is built in stages first, a frame each
        if ui.session.rebuild is None and ui.session.trainer.step == 12:
            break
        ui.frame()
    params, moments, step, config = _state(ui.session)
    assert step == 12 and config == expected[3]
    assert np.array_equal(params, expected[0]) and np.array_equal(moments, expected[1])
    assert np.array_equal(ui.session.history.current.train.y, source.history.current.train.y)
    assert ui.app.draft == config, "the network panel follows the loaded network"
    assert "checkpoint loaded: step 12" in ui.app.notice[0]
    ui.app.running = True  # on the clock, not a count of frames: a loaded machine's frames may hold no step
    assert ui.frames_until(lambda: ui.session.trainer.step > 12, seconds=30), "training goes on from it"


def test_bad_file_changes_nothing_and_says_why(ui, dialogs, tmp_path):
    good = tmp_path / "good.ckpt"
    ckpt.save(good, ckpt.capture(ui.session))
    data = bytearray(good.read_bytes())
    data[-1] ^= 0xFF
    (tmp_path / "bad.ckpt").write_bytes(bytes(data))
    ui.app.running = False
    ui.frame()
    before = _state(ui.session)
    dialogs.answers.append(str(tmp_path / "bad.ckpt"))
    _choose(ui, "load")
    after = _state(ui.session)
    assert np.array_equal(before[0], after[0]) and before[2:] == after[2:]
    assert ui.session.rebuild is None
    assert "not loaded" in ui.app.notice[0] and "checksum" in ui.app.notice[0]


def test_without_a_dialog_program_the_window_asks_for_the_path(ui, monkeypatch, tmp_path):
    """Issue 16, Found 5: without zenity or kdialog, Save, Export and Load each open a path field
    in the window, filled in with a file in the cache folder (the newest checkpoint, to load)."""
    from test_ui_offscreen import _type

    monkeypatch.setattr(files, "dialogs_available", lambda: False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _choose(ui, "save")
    assert ui.app.files.prompt.action == "save"
    folder = tmp_path / "slang-visual-trainer" / "checkpoints"
    assert ui.app.files.prompt.text.startswith(str(folder / "visual-trainer-"))
    ui.click(*_centre(ui, "path ok"))
    saved = list(folder.glob("*.ckpt"))
    assert len(saved) == 1 and ckpt.load(saved[0]).step > 0 and ui.app.files.prompt is None
    assert str(saved[0]) in ui.app.notice[0]
    kept = ckpt.load(saved[0])

    ui.frame(4)  # it trains on past the checkpoint
    _choose(ui, "load")
    assert ui.app.files.prompt.text == str(saved[0]), "the newest checkpoint is offered"
    ui.click(*_centre(ui, "path field"))
    _type(ui, str(tmp_path / "missing.ckpt"))
    assert ui.app.files.prompt is not None and "cannot read" in ui.app.files.prompt.error, "kept open, with why"
    assert ui.session.trainer.step > kept.step
    ui.app.running = False  # to compare with what was saved
    ui.click(*_centre(ui, "path field"))
    _type(ui, str(saved[0]))
    ui.frame()
    assert ui.app.files.prompt is None
    after = _state(ui.session)
    assert np.array_equal(after[0], kept.master) and after[2] == kept.step, "loaded from the typed path"

    _choose(ui, "export")
    assert "exports" in ui.app.files.prompt.text
    ui.click(*_centre(ui, "path cancel"))
    assert ui.app.files.prompt is None
    assert list((tmp_path / "slang-visual-trainer" / "exports").glob("*.slang")) == [], "cancelled: nothing written"


@pytest.fixture
def no_dialog_program(monkeypatch, tmp_path):
    """PATH without zenity, kdialog or the others: what a fresh Debian machine has."""
    bare = tmp_path / "bin"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    assert not files.dialogs_available()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _through_the_field(ui, path) -> None:
    """Types `path` into the open path field and presses its button."""
    from test_ui_offscreen import _type

    ui.click(*_centre(ui, "path field"))
    _type(ui, str(path))
    ui.frame()


def test_every_file_action_has_a_path_field_without_a_dialog_program(ui, no_dialog_program, tmp_path):
    """File's seven actions and the Data panel's Load CSV button each open the path field with their
    own title and button, and act on the path typed (issue 25: CSV and image stopped the field
    with a KeyError, and the stuck field then held back every other file action)."""
    import slangpy as spy

    from app.ui.menu import FILE_ITEMS

    image, points = tmp_path / "photo.png", tmp_path / "points.csv"
    spy.Bitmap(np.random.default_rng(0).integers(0, 256, (12, 16, 3), dtype=np.uint8)).write(str(image))
    rng = np.random.default_rng(1)
    points.write_text(
        "x,y,label\n" + "".join(f"{a:.3f},{b:.3f},{int(a > b)}\n" for a, b in rng.uniform(-1, 1, (40, 2)))
    )
    paths = {"save": tmp_path / "a.ckpt", "load": tmp_path / "a.ckpt", "export": tmp_path / "b.slang"}
    paths["network"] = tmp_path / "saved" / "network.json"  # its folder made
    paths |= {"image": image, "shape": asset("shapes", "heart.svg"), "csv": points}
    paths["sweep"] = write_sweep(tmp_path / "sweep", screenshot_rows())  # a folder
    # Export mesh is offered for a function of (x, y, z) alone: tests/test_export_mesh.py drives it
    assert {action for _, action in FILE_ITEMS} == set(files.ACTIONS) == set(paths) | {"mesh"}
    for _, action in FILE_ITEMS:
        if action == "mesh":
            continue
        _choose(ui, action, frames=2)
        prompt = ui.app.files.prompt
        assert prompt is not None and prompt.action == action, action
        assert "path ok" in ui.app.rects and not ui.app.failures.line, "the field drew, with its button"
        _through_the_field(ui, paths[action])
        assert ui.app.files.prompt is None, (action, ui.app.notice)
        ui.app.rects.pop("path ok")
        ui.frames_until(lambda: ui.session.rebuild is None and ui.app.data.loading is None)
    assert (tmp_path / "a.ckpt").is_file() and (tmp_path / "b.slang").is_file()
    _, saved_params = load_network(str(paths["network"]), Config())  # read back as --load-network reads it
    assert saved_params.size > 0 and np.isfinite(saved_params).all()
    assert ui.session.config.dataset is not None and ui.session.config.dataset.get("sha256"), "the CSV's points"
    # the shape before it trained with the shape preset's eikonal term, which points cannot take
    assert ui.session.config.eikonal == 0 and "derivative loss terms off" in ui.app.data.note
    assert ui.app.sweep.folder.path == paths["sweep"], "the sweep, in its window"
    ui.app.sweep.visible = False  # it lies over the Data panel's button
    ui.click(*_centre(ui, "load csv"))
    ui.frame()
    assert ui.app.files.prompt is not None and ui.app.files.prompt.action == "csv", "the button's own field"


def test_a_path_field_that_fails_to_draw_holds_back_no_other_action(ui, no_dialog_program, monkeypatch, tmp_path):
    from app.ui import path_prompt

    real = path_prompt.draw
    monkeypatch.setattr(path_prompt, "draw", lambda app: (_ for _ in ()).throw(KeyError("csv")))
    _choose(ui, "csv", frames=2)
    assert ui.app.files.prompt is None, "a field that fails is dropped"
    assert "the path field" in ui.app.failures.line, ui.app.failures.line
    monkeypatch.setattr(path_prompt, "draw", real)
    _choose(ui, "save", frames=2)
    assert ui.app.files.prompt is not None and ui.app.files.prompt.action == "save", "the next action opens"
    _through_the_field(ui, tmp_path / "c.ckpt")
    assert (tmp_path / "c.ckpt").is_file()
