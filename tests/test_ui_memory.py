"""What a window left running must not accumulate: textures of networks it rebuilt (SlangPy's
texture_ref() registry keeps every texture it is given unless released)."""

from __future__ import annotations

import imgui_bundle  # noqa: F401 (a dependency: a broken install fails here, never skips)
from slangpy.ui import imgui_bundle as spy_imgui

from app.ui.offscreen import OffscreenApp


def test_rebuilt_networks_textures_are_let_go(make_session):
    ui = OffscreenApp(make_session(), 1280, 800)
    try:
        ui.frame(3)
        registered = []
        for hidden in ([8], [12], [8], [12]):
            ui.app.draft = ui.app.draft.replace(hidden=hidden)
            ui.app.start_rebuild()
            assert ui.frames_until(lambda: ui.session.rebuild is None, seconds=120), f"the {hidden} rebuild ends"
            # Textures not drawn leave the registry when the UI is next drawn, and a frame draws
            # it only when something changed: wait for two draws on the clock, not frames.
            drawn = ui.app.redraw.count
            ui.frames_until(lambda drawn=drawn: ui.app.redraw.count >= drawn + 2)
            registered.append(set(map(id, spy_imgui._TEXTURES_BY_ID.values())))
        atlas = ui.session.heatmaps.atlas
    finally:
        ui.close()
    assert len(registered[-1]) == len(registered[0]), "one set of textures, whatever the rebuilds"
    assert id(atlas) in registered[-1], "the current network's heatmaps are drawn"
