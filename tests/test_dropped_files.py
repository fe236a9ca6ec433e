"""Files dropped on the window or the served page (app/ui/dropped_files.py): which File action each
kind opens, a mesh dropped on the real window state rebuilding in 3D, and a file of no kind it
opens refused with one line while the network trains on. The page's drop is in
tests/test_serve_browser.py."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from app.ui import window as desktop_window
from app.ui.dropped_files import drop_action, refusal
from app.ui.files import ACTIONS, FileActions

OCTAHEDRON = """v 0.5 0 0
v -0.5 0 0
v 0 0.5 0
v 0 -0.5 0
v 0 0 0.5
v 0 0 -0.5
f 1 3 5
f 3 2 5
f 2 4 5
f 4 1 5
f 3 1 6
f 2 3 6
f 4 2 6
f 1 4 6
"""


@pytest.mark.parametrize(
    "name, formulas, shapes",
    [
        ("run.ckpt", "load", "load"),
        ("bunny.OBJ", "shape", "shape"),
        ("scan.ply", "shape", "shape"),
        ("part.stl", "shape", "shape"),
        ("cube.off", "shape", "shape"),
        ("logo.svg", "shape", "shape"),
        ("photo.png", "image", "shape"),  # a silhouette while a shape trains
        ("photo.JPEG", "image", "shape"),
        ("points.csv", "csv", "shape"),  # an outline while a shape trains
        ("notes.txt", None, None),
        ("no suffix", None, None),
    ],
)
def test_a_dropped_files_kind_names_the_file_action_that_opens_it(name, formulas, shapes):
    assert drop_action(f"/somewhere/{name}", shape_trains=False) == formulas
    assert drop_action(f"/somewhere/{name}", shape_trains=True) == shapes
    for action in {formulas, shapes} - {None}:
        assert action in ACTIONS


def test_the_first_file_opens_at_the_next_poll_and_the_others_are_named():
    said, acted = [], []
    app = SimpleNamespace(config=SimpleNamespace(sdf=None), say=lambda text, seconds=4.0: said.append(text))
    files = FileActions(app)
    files.act = lambda action, path: acted.append((action, path))
    files.drop(["/d/a.ply", "/d/b.png", "/d/c.csv"])
    assert acted == [], "not inside the window's event callback"
    files.poll()
    assert acted == [("shape", "/d/a.ply")] and files.dropped == []
    assert said == ["(one file at a time: 2 other dropped file(s) left)"]
    files.poll()
    assert acted == [("shape", "/d/a.ply")], "opened once"
    assert files.open_dropped(["/d/readme.md"]) == refusal("/d/readme.md") == said[-1]
    assert "\n" not in said[-1] and "readme.md" in said[-1] and ".obj" in said[-1]
    assert acted == [("shape", "/d/a.ply")]


def test_the_desktop_windows_drop_callback_hands_the_paths_to_file():
    dropped, noted = [], []
    window = SimpleNamespace(
        app=SimpleNamespace(
            redraw=SimpleNamespace(note_input=lambda: noted.append(1)), files=SimpleNamespace(drop=dropped.append)
        )
    )
    desktop_window._Window._drop_files(window, ["/home/me/bunny.obj"])
    assert dropped == [["/home/me/bunny.obj"]] and noted == [1]


def test_a_mesh_dropped_on_the_window_rebuilds_in_3d_and_a_text_file_keeps_the_network(ui, tmp_path):
    trainer, config = ui.session.trainer, ui.session.config
    notes = tmp_path / "notes.txt"
    notes.write_text("not a mesh\n")
    ui.app.files.drop([str(notes)])
    ui.frame()
    assert ui.app.notice[0] == refusal(str(notes)) and ui.session.rebuild is None
    assert ui.session.trainer is trainer and ui.session.config == config, "the network trains on"
    mesh = tmp_path / "octahedron.obj"
    mesh.write_text(OCTAHEDRON)
    ui.app.files.drop([str(mesh)])
    ui.frame()
    built = ui.session.rebuild.config
    assert (built.dims, built.sdf, built.encoding) == (3, str(mesh), "hashgrid"), ui.app.notice
    assert "octahedron.obj" in ui.app.notice[0]
    ui.session.cancel_rebuild()
    ui.app.files.drop([str(mesh), str(notes)])  # again, with a second file: the rebuild's note says both
    ui.frame()
    assert "network for octahedron.obj" in ui.app.notice[0], ui.app.notice
    assert ui.app.notice[0].endswith("(one file at a time: 1 other dropped file(s) left)")
    ui.session.cancel_rebuild()
