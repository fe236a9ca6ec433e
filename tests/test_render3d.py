"""The 3D view's sphere tracer (shaders/views/render3d.slang) against numpy: the truth's picture of a
sphere against the exact ray-sphere intersection and its shading, the learned picture against a numpy
sphere trace of the exported network (app/files/network_io.py's forward), and the panel's camera
driven by a drag and the wheel in the offscreen window."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from app.config.config import Config, validate
from app.kernels import surface_constants as sc
from app.views.orbit_camera import FOV, OrbitCamera
from app.views.slices import box as box_of

SPHERE = "sqrt(x*x + y*y + z*z) - 0.5"
RADIUS = 0.5
NONE, SURFACE, CUT, INVALID = range(4)


def _linear(srgb: np.ndarray) -> np.ndarray:
    srgb = np.clip(srgb, 0.0, 1.0)
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _rays(camera: OrbitCamera, box: np.ndarray, side: int):
    """Each pixel's unit ray (side, side, 3), row 0 at the top, and the camera's frame."""
    eye, target, up = camera.pose(box)
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, up)
    right /= np.linalg.norm(right)
    above = np.cross(right, forward)
    half = math.tan(math.radians(FOV) / 2)
    centres = ((np.arange(side) + 0.5) / side * 2 - 1) * half
    dirs = forward + centres[None, :, None] * right + -centres[:, None, None] * above
    return eye, dirs / np.linalg.norm(dirs, axis=-1, keepdims=True), (forward, right, above), half


def _box_span(eye, dirs, lo, hi):
    safe = np.where(np.abs(dirs) < 1e-12, 1e-12, dirs)
    a, b = (lo - eye) / safe, (hi - eye) / safe
    return np.minimum(a, b).max(axis=-1), np.maximum(a, b).min(axis=-1)


def _near_edge(q, lo, hi, width):
    inside = np.minimum(q - lo, hi - q)
    return (inside < width[..., None]).sum(axis=-1) >= 2


def _numpy_trace(field, eye, dirs, lo, hi):
    """The kernel's sphere tracing, vectorised over rays in float64: (kind, depth) per ray."""
    near, far = _box_span(eye, dirs, lo, hi)
    diagonal = float(np.linalg.norm(hi - lo))
    epsilon, least = sc.HIT_EPSILON * diagonal, sc.MIN_STEP * diagonal
    live = (near <= far) & (far > 0)
    t = np.maximum(near, 0.0)
    outside, inside = t.copy(), np.full_like(t, -1.0)
    steps, halvings = np.zeros(t.shape, int), np.zeros(t.shape, int)
    kind, depth = np.full(t.shape, NONE), np.full(t.shape, -1.0)

    def finish(rays, what, where):
        kind[rays], depth[rays] = what, where
        live[rays] = False

    for _ in range(sc.MAX_STEPS + sc.BISECTIONS + 2):
        rays = np.flatnonzero(live)
        if rays.size == 0:
            break
        f = field(eye + t[rays, None] * dirs[rays])
        finish(rays[~np.isfinite(f)], INVALID, t[rays[~np.isfinite(f)]])
        ok = np.isfinite(f)
        negative = ok & (f < 0)
        bisecting = ok & (inside[rays] >= 0)
        inside[rays[bisecting & negative]] = t[rays[bisecting & negative]]
        outside[rays[bisecting & ~negative]] = t[rays[bisecting & ~negative]]
        halvings[rays[bisecting]] += 1
        done = rays[bisecting & (halvings[rays] == sc.BISECTIONS)]
        finish(done, SURFACE, 0.5 * (outside[done] + inside[done]))
        going = rays[bisecting & (halvings[rays] < sc.BISECTIONS)]
        t[going] = 0.5 * (outside[going] + inside[going])
        marching = ok & ~bisecting
        finish(rays[marching & negative & (steps[rays] == 0)], CUT, t[rays[marching & negative & (steps[rays] == 0)]])
        crossed = rays[marching & negative & (steps[rays] > 0)]
        inside[crossed] = t[crossed]
        t[crossed] = 0.5 * (outside[crossed] + inside[crossed])
        positive = marching & ~negative
        finish(rays[positive & (f < epsilon)], SURFACE, t[rays[positive & (f < epsilon)]])
        away = positive & (f >= epsilon)
        gone = away & ((t[rays] >= far[rays]) | (steps[rays] == sc.MAX_STEPS))
        finish(rays[gone], NONE, -1.0)
        step = rays[away & ~gone]
        outside[step] = t[step]
        t[step] = np.minimum(t[step] + np.maximum(f[away & ~gone] * sc.STEP_SCALE, least), far[step])
        steps[step] += 1
    return kind, depth


def _renderer(trainer, side: int, camera: OrbitCamera):
    from app.views.render3d import RenderView, SurfaceRender

    render = SurfaceRender(trainer, side)
    render.render(RenderView(camera, side))
    return render


@pytest.fixture(scope="module")
def sphere_trainer(gpu):
    from app.train.trainer import Trainer

    return Trainer(gpu, validate(Config(dims=3, targets=[SPHERE], encoding="raw", hidden=[16], seed=3)))


def test_the_truths_picture_of_a_sphere_is_the_exact_ray_sphere_intersection_shaded(sphere_trainer):
    side, camera = 64, OrbitCamera(yaw=30.0, pitch=20.0, zoom=0.8)
    render = _renderer(sphere_trainer, side, camera)
    pictures, depths = render.read()
    box = box_of(sphere_trainer.config.domain, sphere_trainer.config.z_range)
    lo, hi = box[:, 0], box[:, 1]
    eye, dirs, (forward, right, above), half = _rays(camera, box, side)
    b = dirs @ eye
    disc = b * b - (eye @ eye - RADIUS**2)
    exact = np.where(disc > 0, -b - np.sqrt(np.maximum(disc, 0.0)), -1.0)
    # Rays that pass within the hit tolerance of the sphere count as hits: those that graze its
    # silhouette (by three tolerances) may go either way
    passing = np.sqrt(np.maximum(eye @ eye - b * b, 0.0))  # the ray's distance from the centre
    clear = np.abs(passing - RADIUS) > 3 * sc.HIT_EPSILON * np.linalg.norm(hi - lo)
    hits = depths[1] > 0
    assert 0.06 < hits.mean() < 0.5, "the sphere should fill a good part of the picture"
    np.testing.assert_array_equal(hits[clear], (disc > 0)[clear])
    # |f| < epsilon is a hit: up to epsilon / cos(angle of incidence) before the surface
    points = eye + exact[..., None] * dirs
    normal = points / np.linalg.norm(points, axis=-1, keepdims=True)
    incidence = np.abs(np.sum(normal * dirs, axis=-1))
    epsilon = sc.HIT_EPSILON * np.linalg.norm(hi - lo)
    error = np.abs(depths[1] - exact)[hits & clear]
    assert np.all(error <= 1.05 * epsilon / incidence[hits & clear] + 1e-4)
    assert np.median(error) < 2e-4

    # Shading: the exact normal, the light fixed to the camera, sRGB base colour in linear output
    light = sc.LIGHT_RIGHT * right + sc.LIGHT_UP * above - sc.LIGHT_BACK * forward
    light /= np.linalg.norm(light)
    diffuse = np.maximum(normal @ light, 0.0)
    halfway = light - dirs
    halfway /= np.linalg.norm(halfway, axis=-1, keepdims=True)
    specular = sc.SPECULAR * np.maximum(np.sum(normal * halfway, axis=-1), 0.0) ** sc.SHININESS
    shaded = np.asarray(sc.TRUTH_COLOUR) * (sc.AMBIENT + (1 - sc.AMBIENT) * diffuse[..., None]) + specular[..., None]
    near, far = _box_span(eye, dirs, lo, hi)
    width = 2 * sc.EDGE_PIXELS * 2 * half / side  # twice the kernel's, per unit of distance
    front_edge = _near_edge(eye + near[..., None] * dirs, lo, hi, width * near)
    back_edge = _near_edge(eye + far[..., None] * dirs, lo, hi, width * far)
    surface = hits & clear & ~front_edge
    np.testing.assert_allclose(pictures[1][surface][:, :3], _linear(shaded[surface]), atol=0.01)
    outside_box = ~((near <= far) & (far > 0))
    assert outside_box.sum() > 50
    assert np.abs(pictures[1][outside_box][:, :3] - _linear(np.asarray(sc.BACKGROUND))).max() < 2e-3
    empty = ~outside_box & ~hits & clear & ~front_edge & ~back_edge
    assert empty.sum() > 50
    assert np.abs(pictures[1][empty][:, :3] - _linear(np.asarray(sc.BOX_INSIDE))).max() < 2e-3
    assert np.all(pictures[1][..., 3] == 1.0)


def test_the_learned_picture_is_a_numpy_sphere_trace_of_the_exported_network(sphere_trainer):
    from app.files.network_io import export_network, forward

    sphere_trainer.reset()
    sphere_trainer.train(150)
    side, camera = 40, OrbitCamera(yaw=-50.0, pitch=35.0, zoom=0.5)
    render = _renderer(sphere_trainer, side, camera)
    _, depths = render.read()
    network = export_network(sphere_trainer.plan, sphere_trainer.config, sphere_trainer.parameters())
    box = box_of(sphere_trainer.config.domain, sphere_trainer.config.z_range)
    eye, dirs, _, _ = _rays(camera, box, side)

    def field(points):
        return forward(network, points[:, 0], points[:, 1], z=points[:, 2])[:, 0]

    kind, expected = _numpy_trace(field, eye, dirs.reshape(-1, 3), box[:, 0], box[:, 1])
    kind, expected = kind.reshape(side, side), expected.reshape(side, side)
    hits, expected_hits = depths[0] > 0, np.isin(kind, (SURFACE, CUT))
    assert 0.1 < expected_hits.mean() < 0.9, "the learned surface should be in view, not everywhere"
    assert np.mean(hits == expected_hits) >= 0.99
    both = hits & expected_hits
    error = np.abs(depths[0][both] - expected[both])  # float32 on the GPU, float64 here
    assert np.quantile(error, 0.95) < 1e-4 and error.max() < 2e-3
    # A picture of the weights it was given: other weights draw another surface
    sphere_trainer.reset(seed=11)
    render.render(render.wanted)
    assert np.mean((render.read()[1][0] > 0) != hits) > 0.02


def _drag(ui, start, end, steps: int = 2) -> None:
    """Press at `start`, move to `end` in `steps` frames, release: a drag as the window gets it."""
    from imgui_bundle import imgui

    ui.move(*start)
    for down in (True, None, False):
        ui.renderer.make_current()
        if down is None:
            for k in range(1, steps + 1):
                x, y = (a + (b - a) * k / steps for a, b in zip(start, end))
                imgui.get_io().add_mouse_pos_event(x, y)
                ui.app.redraw.note_input()
                ui.frame()
                ui.renderer.make_current()
            continue
        imgui.get_io().add_mouse_button_event(0, down)
        ui.app.redraw.note_input()
        ui.frame()


def test_a_drag_turns_the_3d_views_camera_the_wheel_zooms_it_and_the_pictures_follow(make_session):
    from imgui_bundle import imgui

    from app.ui.offscreen import OffscreenApp
    from app.ui.panels.table import VIEW_3D
    from app.ui.panels.view3d import state_of
    from app.views import orbit_camera
    from app.views.render3d import RenderView

    ui = OffscreenApp(make_session(dims=3, targets=[SPHERE], encoding="raw", hidden=[8]), 1280, 800)
    try:
        ui.app.running = False
        ui.frame(3)
        assert VIEW_3D in ui.app.windows
        state = state_of(ui.app)
        assert ui.frames_until(lambda: state.render.shown_view is not None and not state.render.stale())
        before, side = state.render.read()[0], state.render.shown_view.side
        x0, y0, x1, y1 = ui.app.rects["3d learned"]
        centre = ((x0 + x1) / 2, (y0 + y1) / 2)
        _drag(ui, centre, (centre[0] + 40, centre[1] + 20))
        turned = OrbitCamera()
        assert state.camera.yaw == pytest.approx((turned.yaw - 40 * orbit_camera.DEGREES_PER_PIXEL) % 360)
        assert state.camera.pitch == pytest.approx(turned.pitch + 20 * orbit_camera.DEGREES_PER_PIXEL)
        x0, y0, x1, y1 = ui.app.rects["3d truth"]
        ui.move((x0 + x1) / 2, (y0 + y1) / 2)
        ui.renderer.make_current()
        imgui.get_io().add_mouse_wheel_event(0.0, 2.0)  # two notches away from the user: nearer
        ui.frame()
        assert state.camera.zoom == pytest.approx(orbit_camera.WHEEL_ZOOM**2)
        # Coarser while the camera moves (on a CPU driver), then whole again
        settled = RenderView(state.camera, side)
        assert ui.frames_until(lambda: state.render.shown_view == settled and not state.render.stale())
        after = state.render.read()[0]
        for part in range(2):  # both pictures follow the one camera
            assert np.mean(np.abs(after[part] - before[part]).max(axis=-1) > 0.05) > 0.05
        ui.click(*np.reshape(ui.app.rects["3d reset"], (2, 2)).mean(axis=0))
        assert state.camera == OrbitCamera()
    finally:
        ui.close()


def test_a_function_of_x_and_y_has_no_3d_view(ui):
    from app.ui.panels.table import VIEW_3D

    assert VIEW_3D not in ui.app.windows and "Heatmaps" in ui.app.windows


def test_a_rebuilds_warming_child_builds_the_3d_views_and_surface_figures_kernels(gpu, monkeypatch):
    """The child that compiles a new network ahead of the window (app/loop/rebuild.py) builds the 3D
    view's pipeline and the surface figures' lattice too, for a function of (x, y, z) only."""
    from app.loop import rebuild

    built = []
    monkeypatch.setattr("app.gpu.gpu.create_gpu", lambda *args, **kwargs: gpu)
    for name in ("SurfaceRender", "SurfaceTracker"):
        real = getattr(rebuild, name)
        monkeypatch.setattr(
            rebuild, name, lambda trainer, side, real=real, name=name: built.append(name) or real(trainer, side)
        )
    config = validate(
        Config(dims=3, targets=["sqrt(x*x + y*y + z*z) - 0.5"], encoding="raw", hidden=[4], activation="softplus",
               eikonal=0.1, batch_size=64)
    )  # fmt: skip
    rebuild._warm(json.dumps(config.to_dict()), "auto", "")
    assert built == ["SurfaceRender", "SurfaceTracker"]
    built.clear()
    rebuild._warm(json.dumps(validate(Config(hidden=[4], batch_size=64)).to_dict()), "auto", "")
    assert built == []
