"""3D view panel, for a function of (x, y, z): the learned surface (an output's zero set) beside the
truth's, sphere traced from one orbit camera (app/views/render3d.py) and drawn again when the weights
or the camera change. Drag on either picture to turn it, the wheel zooms; "reset view" goes back."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

from imgui_bundle import imgui

from ...kernels.surface_constants import LEARNED_COLOUR, TRUTH_COLOUR
from ...kernels.view_constants import INVALID_COLOUR
from ...loop.budget import PRIOR_FLOPS
from ...views.orbit_camera import OrbitCamera
from ...views.render3d import LEARNED, TRUTH, RenderView, SurfaceRender
from ..style import MUTED, em

# Pixels a side, at most: a CPU driver traces a pixel in tens of microseconds (docs/benchmarks.md,
# '3D view'), so it draws smaller pictures, and coarser ones still while the camera moves.
MOST_SIDE = {"gpu": 256, "software": 128}
COARSE_DIVISOR = {"gpu": 1, "software": 4}  # while the camera moves, and for a first picture
LEAST_SIDE = 16
SETTLE_S = 0.3  # the camera counts as moving this long after it last moved
# A frame's share of a pass on a CPU driver, in GPU seconds: a small one for the weights' changes
# while it trains (the training shares the frame), more for a new view or while paused; a new view
# whole where it takes at most WHOLE_SECONDS (docs/benchmarks.md, '3D view')
FRAME_SECONDS = {"training": 0.002, "view": 0.05}
WHOLE_SECONDS = {"training": 0.1, "paused": 1.0}
GUESS_EVALUATIONS = 64  # of the field, a pixel: steps, halvings and the normal's differences


@dataclass
class View3DState:
    camera: OrbitCamera = field(default_factory=OrbitCamera)
    output: int = 0
    render: SurfaceRender | None = None
    moved_at: float = -math.inf  # when the camera last moved (time.perf_counter)
    held: bool = False  # the mouse was held down on a picture last frame


def state_of(app) -> View3DState:
    state = getattr(app, "view3d", None)
    if state is None:
        state = app.view3d = View3DState()
    return state


def _device(app) -> str:
    return "software" if app.gpu.software else "gpu"


def _renderer(app, state: View3DState) -> SurfaceRender:
    """The renderer of the current network (a new network's kernels need one of their own)."""
    trainer = app.session.trainer
    if state.render is None or state.render.trainer is not trainer:
        state.render = SurfaceRender(trainer, MOST_SIDE[_device(app)])
    return state.render


def _render(app, state: View3DState, side: int, moving: bool) -> None:
    """This frame's share of the wanted pass, submitted at once in a command buffer of its own: the
    GPU renders it while the UI is built, and a pass that completes is shown in this frame."""
    render, device = _renderer(app, state), _device(app)
    coarse = moving or render.shown_view is None  # a first picture soon, which measures the rates
    if coarse:
        side = max(LEAST_SIDE, side // COARSE_DIVISOR[device])
    state.output = min(state.output, app.config.output_dim - 1)
    render.wanted = RenderView(state.camera, max(LEAST_SIDE, min(side, render.most_side)), state.output)
    if not (render.stale() and render.can_start()):
        return
    render.take_timing()  # the last frame's range, before this one's is sized
    with app.gpu.submit(wait=False) as encoder:
        render.record(encoder, None if coarse else _pixels(app, render))


def _pixels(app, render: SurfaceRender) -> int | None:
    """How much of the pass this frame renders (None: the rest of it). A GPU renders a whole pass
    a frame; a CPU driver a new view whole where that takes little enough, else over frames."""
    if not app.gpu.software:
        return None
    new_view = render.shown_view != render.wanted
    left = render.seconds_left()
    if new_view and left is not None and left <= WHOLE_SECONDS["training" if app.running else "paused"]:
        return None
    seconds = FRAME_SECONDS["training" if app.running and not new_view else "view"]
    return render.pixels_within(seconds, _guess(app))


def _guess(app) -> dict[int, float]:
    """Seconds a pixel of each part before any is measured: GUESS_EVALUATIONS of the network at the
    frame budget's first guess of the device's speed (app/loop/budget.py), well below it."""
    plan = app.session.trainer.plan
    flops = 2 * GUESS_EVALUATIONS * (plan.mlp_param_count + 8 * plan.input_dim)
    return dict.fromkeys((LEARNED, TRUTH), flops / PRIOR_FLOPS[_device(app)])


def _controls(app, state: View3DState, render: SurfaceRender) -> None:
    if imgui.small_button("reset view"):
        state.camera, state.moved_at = OrbitCamera(), time.perf_counter()
    app.remember("3d reset")
    outputs = app.config.output_dim
    if outputs > 1:
        imgui.same_line(0, em(1))
        imgui.text_colored(MUTED, "surface of")
        for o in range(outputs):
            imgui.same_line()
            if imgui.radio_button(f"f{o + 1}###3d output {o}", state.output == o):
                state.output = o
            app.remember(f"3d output f{o + 1}")
    camera = state.camera
    imgui.same_line(0, em(1))
    imgui.text_colored(MUTED, f"yaw {camera.yaw:.0f}°  pitch {camera.pitch:.0f}°  zoom {1 / camera.zoom:.2f}x")
    drawing = render.drawing
    if drawing is not None:
        imgui.same_line(0, em(1))
        imgui.text_colored(MUTED, f"drawing {drawing.side}²: {100 * render.progress / render.units:.0f}%")


def _note(name: str) -> str:
    return (
        f"Darker: where the box's wall cuts the inside ({name} < 0 there, negative inside). "
        "Drag to turn, wheel to zoom."
    )


def _captions(name: str, left: float, side_px: float, spacing: float) -> None:
    """Above each picture, in its surface's colour, what it shows; then what magenta means."""
    captions = ((LEARNED_COLOUR, f"learned: {name} = 0"), (TRUTH_COLOUR, f"truth: target {name} = 0"))
    for part, (colour, caption) in enumerate(captions):
        x = left + part * (side_px + spacing)
        if part:
            imgui.same_line()
        imgui.set_cursor_pos_x(x + max(0.0, (side_px - imgui.calc_text_size(caption).x) / 2))
        imgui.text_colored(imgui.ImVec4(*colour, 1.0), caption)


def _legend(name: str) -> None:
    imgui.push_text_wrap_pos(0.0)
    imgui.text_colored(imgui.ImVec4(*INVALID_COLOUR, 1.0), "not finite")
    imgui.same_line()
    imgui.text_colored(MUTED, _note(name))
    imgui.pop_text_wrap_pos()


def _picture(app, state: View3DState, render: SurfaceRender, part: int, side_px: float) -> None:
    """One picture (0 learned, 1 truth) of the shown pass, and the drag and wheel over it."""
    shown = render.shown_view
    origin = imgui.get_cursor_screen_pos()
    if shown is not None:
        texture, s = render.texture, shown.side
        u0, u1, v1 = part * s / texture.width, (part + 1) * s / texture.width, s / texture.height
        imgui.image(
            app.renderer.texture(texture), imgui.ImVec2(side_px, side_px), imgui.ImVec2(u0, 0), imgui.ImVec2(u1, v1)
        )
    else:
        imgui.dummy(imgui.ImVec2(side_px, side_px))
    imgui.set_cursor_screen_pos(origin)
    imgui.invisible_button(f"3d picture {part}", imgui.ImVec2(side_px, side_px))
    app.remember("3d learned" if part == 0 else "3d truth")
    io = imgui.get_io()
    if imgui.is_item_active() and (io.mouse_delta.x or io.mouse_delta.y):
        state.camera, state.moved_at = state.camera.turned(io.mouse_delta.x, io.mouse_delta.y), time.perf_counter()
    if imgui.is_item_hovered() and io.mouse_wheel:
        state.camera, state.moved_at = state.camera.zoomed(io.mouse_wheel), time.perf_counter()


def draw(app) -> None:
    state = state_of(app)
    if app.session.trainer.kernels.render_surface is None:  # a function of (x, y): no surface
        imgui.text_colored(MUTED, "The 3D view shows functions of (x, y, z) (--dims 3).")
        return
    render = _renderer(app, state)
    _controls(app, state, render)
    name = f"f{state.output + 1}"
    spacing = imgui.get_style().item_spacing
    title = imgui.get_text_line_height_with_spacing()
    avail = imgui.get_content_region_avail()
    # Besides the pictures: the captions above, the legend below as it wraps
    legend = imgui.calc_text_size("not finite " + _note(name), wrap_width=avail.x).y + spacing.y
    side_px = max(em(4), min((avail.x - spacing.x) / 2, avail.y - title - legend))
    moving = time.perf_counter() - state.moved_at < SETTLE_S or state.held
    _render(app, state, int(side_px), moving)
    _captions(name, imgui.get_cursor_pos_x(), side_px, spacing.x)
    held = False
    for part in range(2):
        if part:
            imgui.same_line()
        _picture(app, state, render, part, side_px)
        held = held or imgui.is_item_active()
    state.held = held
    _legend(name)
