"""When a frame draws the UI again, and when it may keep what the window already shows. On a CPU
driver drawing the UI is most of a frame, almost all of it per-pixel work, so an unchanged frame is
not drawn again (at least every REFRESH_S anyway), and while it trains the UI is drawn at most UI_HZ
times a second, at once after input (docs/architecture.md, 'The window's frame loop'; figures:
docs/benchmarks.md, 'On a machine without a GPU'). On a GPU every frame draws it."""

from __future__ import annotations

import ctypes
import time

REFRESH_S = 0.5
UI_HZ = 12


def draw_signature(draw_data) -> tuple:
    """Everything a drawing of `draw_data` depends on besides the textures' pixels: every list's
    vertices, indices and commands (clip rectangle, texture, offsets, counts)."""
    parts = []
    for draw_list in draw_data.cmd_lists:
        vertices, indices = draw_list.vtx_buffer, draw_list.idx_buffer
        parts.append(ctypes.string_at(vertices.data_address(), vertices.size() * 20))  # ImDrawVert: 20 bytes
        parts.append(ctypes.string_at(indices.data_address(), indices.size() * 4))  # ImDrawIdx: 4 bytes
        for cmd in draw_list.cmd_buffer:
            clip = cmd.clip_rect
            parts.append(
                (clip.x, clip.y, clip.z, clip.w, cmd.get_tex_id(), cmd.vtx_offset, cmd.idx_offset, cmd.elem_count)
            )
    return tuple(parts)


class Redraw:
    """Decides, frame by frame, whether the UI is drawn; counts the frames that were."""

    def __init__(self) -> None:
        self._shown: tuple | None = None  # the signature of what the target shows
        self._pending: tuple | None = None
        self._drawn_at = float("-inf")
        self.input = False  # input arrived since the last drawn frame
        self.input_at = float("-inf")  # when input last arrived (time.perf_counter)
        self.count = 0  # frames drawn

    def invalidate(self) -> None:
        """The target lost what it showed (a new swapchain, a resize): the next frame draws."""
        self._shown = None

    def note_input(self) -> None:
        self.input = True
        self.input_at = time.perf_counter()

    def wanted(self, draw_data, textures: tuple, target_key, training: bool, software: bool) -> bool:
        """Whether this frame draws: its draw lists, `textures` (what their pixels depend on) and
        `target_key` against the last drawn frame's. A GPU training draws every frame (its UI
        changes every frame: no comparison); a CPU driver training at most UI_HZ times a second
        unless input arrived."""
        if training and not software:
            self._pending = None  # nothing to compare the next frame with
            return True
        now = time.perf_counter()
        if self._shown is not None and now - self._drawn_at < REFRESH_S:
            if training and not self.input and now - self._drawn_at < 1.0 / UI_HZ:
                return False
        self._pending = (target_key, textures, draw_signature(draw_data))
        return self._pending != self._shown or now - self._drawn_at >= REFRESH_S

    @property
    def drawn_at(self) -> float:
        """When the last drawn frame was drawn (time.perf_counter)."""
        return self._drawn_at

    def drawn(self) -> None:
        """The frame asked about last was drawn."""
        self._shown, self._pending = self._pending, None
        self._drawn_at = time.perf_counter()
        self.input = False
        self.count += 1
