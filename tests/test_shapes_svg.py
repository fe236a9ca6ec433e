"""SVG shapes (app/truth/shapes/svg.py): known squares against the closed-form box distance, the
viewBox's placement and y flip, fill rules, transforms, Bézier flattening within its tolerance,
and the example heart."""

from pathlib import Path

import numpy as np
import pytest

from app.truth.shapes import load_shape, shape_distance

ROOT = Path(__file__).resolve().parent.parent
RNG = np.random.default_rng(3)
POINTS = RNG.uniform(-1, 1, (2000, 2))
DOMAIN = (-1.0, 1.0, -1.0, 1.0)


def svg(tmp_path, body: str, view_box: str = 'viewBox="0 0 100 100"', name: str = "shape.svg") -> str:
    path = tmp_path / name
    path.write_text(f'<svg xmlns="http://www.w3.org/2000/svg" {view_box}>{body}</svg>')
    return str(path)


def box_distance(xy, centre, half):
    """The closed form: q = |p - c| - b, |max(q, 0)| + min(max(q.x, q.y), 0)."""
    q = np.abs(xy - centre) - half
    return np.hypot(*np.maximum(q, 0).T) + np.minimum(q.max(axis=1), 0)


# x 20..80, y 30..70 in SVG units; the 100 x 100 viewBox fills [-1, 1]^2: centre (0, 0), half 0.6 x 0.4
SQUARES = {
    "rect": '<rect x="20" y="30" width="60" height="40"/>',
    "path": '<path d="M20 30 H80 V70 H20 Z"/>',
    "relative path": '<path d="m20,30 l60,0 0,40 h-60 z"/>',
    "polygon": '<polygon points="20,30 80,30 80,70 20,70"/>',
    "transformed": '<g transform="translate(50 50) scale(2)"><rect x="-15" y="-10" width="30" height="20"/></g>',
    "matrix": '<rect transform="matrix(0 1 -1 0 100 0)" x="30" y="20" width="40" height="60"/>',
}


@pytest.mark.parametrize("body", SQUARES.values(), ids=SQUARES.keys())
def test_a_known_rectangle_is_the_closed_form_box(tmp_path, body):
    field = load_shape(svg(tmp_path, body), DOMAIN, resolution=64)
    expected = box_distance(POINTS, (0, 0), (0.6, 0.4))
    np.testing.assert_allclose(shape_distance(field, POINTS), expected, atol=1e-12)
    assert field.kind == "svg" and field.name == "shape.svg" and field.distance.shape == (64, 64)
    rows, cols = np.mgrid[:64, :64]
    centres = np.stack([-1 + (cols.ravel() + 0.5) / 32, 1 - (rows.ravel() + 0.5) / 32], axis=1)
    np.testing.assert_allclose(field.distance.ravel(), box_distance(centres, (0, 0), (0.6, 0.4)), atol=1e-6)
    np.testing.assert_allclose(np.abs(shape_distance(field, field.points.astype(float))), 0, atol=1e-6)
    out = shape_distance(field, field.points + 1e-3 * field.normals.astype(float))
    np.testing.assert_allclose(out, 1e-3, atol=1e-6)  # normals point out


def test_the_view_box_is_fitted_centred_and_flipped(tmp_path):
    """A 200 x 100 viewBox in [-1, 1]^2: scale 0.01, centred, so y 0..100 spans 0.5..-0.5; an
    apex at the SVG's top (small y) is at the domain's top."""
    path = svg(tmp_path, '<polygon points="100,10 130,90 70,90"/>', 'viewBox="0 0 200 100"')
    field = load_shape(path, DOMAIN, resolution=32)
    apex, foot = np.array([[0.0, 0.4]]), np.array([[0.0, -0.4]])
    assert shape_distance(field, apex)[0] == pytest.approx(0, abs=1e-12)
    assert shape_distance(field, foot)[0] == pytest.approx(0, abs=1e-12)
    assert shape_distance(field, np.array([[0.0, 0.0]]))[0] < 0


def test_width_and_height_stand_for_a_missing_view_box(tmp_path):
    field = load_shape(svg(tmp_path, SQUARES["rect"], 'width="100px" height="100"'), DOMAIN, resolution=32)
    np.testing.assert_allclose(shape_distance(field, POINTS), box_distance(POINTS, (0, 0), (0.6, 0.4)), atol=1e-12)


NESTED = '<path {rule} d="M10 10 H90 V90 H10 Z M30 30 H70 V70 H30 Z"/>'  # both squares clockwise


def test_fill_rules(tmp_path):
    """Nonzero fills the inner square too (its outline bounds nothing and is dropped); even-odd
    leaves it a hole."""
    nonzero = load_shape(svg(tmp_path, NESTED.format(rule="")), DOMAIN, resolution=32)
    centre = np.array([[0.0, 0.0], [0.5, 0.0]])
    np.testing.assert_allclose(shape_distance(nonzero, centre), [-0.8, -0.3], atol=1e-12)
    evenodd = load_shape(svg(tmp_path, NESTED.format(rule='fill-rule="evenodd"')), DOMAIN, resolution=32)
    np.testing.assert_allclose(shape_distance(evenodd, centre), [0.4, -0.1], atol=1e-12)
    styled = load_shape(svg(tmp_path, f'<g style="fill-rule: evenodd">{NESTED.format(rule="")}</g>'), DOMAIN, 32)
    np.testing.assert_array_equal(styled.distance, evenodd.distance)


def test_unfilled_and_hidden_elements_are_not_drawn(tmp_path):
    hidden = '<defs><rect width="100" height="100"/></defs><circle cx="0" cy="0" r="9" fill="none"/>'
    field = load_shape(svg(tmp_path, hidden + SQUARES["rect"]), DOMAIN, resolution=32)
    np.testing.assert_allclose(shape_distance(field, POINTS), box_distance(POINTS, (0, 0), (0.6, 0.4)), atol=1e-12)


def test_circles_and_rounded_rects_within_the_flattening_tolerance(tmp_path):
    """Flattened within 1e-4 of the domain's side (2e-4 here), chords inside the arcs."""
    circle = shape_distance(load_shape(svg(tmp_path, '<circle cx="50" cy="50" r="25"/>'), DOMAIN, 32), POINTS)
    assert np.abs(circle - (np.hypot(*POINTS.T) - 0.5)).max() < 2e-4
    rounded = load_shape(svg(tmp_path, '<rect x="25" y="32.5" width="50" height="35" rx="7.5"/>'), DOMAIN, 32)
    rounded = shape_distance(rounded, POINTS)
    assert np.abs(rounded - shape_distance("rounded-box", POINTS)).max() < 2e-4


def bezier(controls, t):
    """De Casteljau's evaluation, the test's own."""
    points = np.broadcast_to(np.asarray(controls, float)[None], (len(t), len(controls), 2)).copy()
    while points.shape[1] > 1:
        points = (1 - t)[:, None, None] * points[:, :-1] + t[:, None, None] * points[:, 1:]
    return points[:, 0]


def test_cubic_and_quadratic_curves_are_flattened_within_tolerance(tmp_path):
    d = "M 10 50 C 10 -20 90 120 90 50 Q 50 -40 10 50 Z"
    field = load_shape(svg(tmp_path, f'<path d="{d}"/>'), DOMAIN, resolution=32)
    t = np.linspace(0, 1, 4001)
    curve = np.concatenate(
        [bezier([[10, 50], [10, -20], [90, 120], [90, 50]], t), bezier([[90, 50], [50, -40], [10, 50]], t)]
    )
    in_domain = (curve - 50) * np.array([0.02, -0.02])
    assert np.abs(shape_distance(field, in_domain)).max() <= 2e-4


def test_smooth_commands_reflect_the_previous_control_point(tmp_path):
    smooth = svg(
        tmp_path, '<path d="M10 50 C10 10 40 10 50 50 S90 90 90 50 Q90 10 70 15 T30 40 Z"/>', name="smooth.svg"
    )
    explicit = '<path d="M10 50 C10 10 40 10 50 50 C60 90 90 90 90 50 Q90 10 70 15 Q50 20 30 40 Z"/>'
    explicit = svg(tmp_path, explicit, name="explicit.svg")
    a, b = (load_shape(path, DOMAIN, resolution=32) for path in (smooth, explicit))
    np.testing.assert_array_equal(a.distance, b.distance)
    np.testing.assert_allclose(shape_distance(a, POINTS), shape_distance(b, POINTS), atol=1e-12)


def test_the_example_heart():
    """Two cubics, mirror images about x = 0: the grid is symmetric, negative in its middle, and
    its boundary samples are on the zero level."""
    field = load_shape(str(ROOT / "assets/shapes/heart.svg"), DOMAIN, resolution=128)
    assert field.kind == "svg" and field.name == "heart.svg"
    np.testing.assert_allclose(field.distance, field.distance[:, ::-1], atol=1e-6)
    assert shape_distance(field, np.array([[0.0, 0.0]]))[0] < -0.3
    assert np.abs(shape_distance(field, field.points.astype(float))).max() < 1e-6
