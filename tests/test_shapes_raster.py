"""Silhouettes and point sets (app/truth/shapes): the EDT against brute force, a drawn disc's
zero level against the true circle, the luminance rule, the example key, and CSV points on a
circle with and without normals."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest
import slangpy as spy

from app.errors import UserError
from app.truth.shapes import load_shape, shape_distance
from app.truth.shapes.edt import squared_edt
from app.truth.shapes.silhouette import inside_mask

ROOT = Path(__file__).resolve().parent.parent
DOMAIN = (-1.0, 1.0, -1.0, 1.0)


def brute_squared_edt(mask):
    rows, cols = np.nonzero(mask)
    r, c = np.mgrid[: mask.shape[0], : mask.shape[1]]
    return ((r[..., None] - rows) ** 2 + (c[..., None] - cols) ** 2).min(axis=-1)


def test_edt_equals_brute_force_exactly_on_random_masks():
    rng = np.random.default_rng(11)
    masks = [np.eye(1, 9, 4, dtype=bool), np.ones((3, 1), bool), np.eye(7, dtype=bool)]
    for _ in range(40):
        height, width = rng.integers(1, 24, 2)
        mask = rng.random((height, width)) < rng.uniform(0.01, 0.5)
        mask.flat[rng.integers(mask.size)] = True
        masks.append(mask)
    for mask in masks:
        np.testing.assert_array_equal(squared_edt(mask), brute_squared_edt(mask))


def test_the_luminance_rule():
    """Dark (luminance over white < 0.5) is inside; transparent counts as light; Rec. 709 weights."""
    rgba = np.array([[[0, 0, 0, 1], [0, 0, 0, 0], [0.4, 0.4, 0.4, 1], [0.6, 0.6, 0.6, 1]]])
    assert inside_mask(rgba).tolist() == [[True, False, True, False]]
    rgb = np.array([[[0, 0, 1], [0, 1, 0], [1, 0, 0]]])  # blue 0.0722, green 0.7152, red 0.2126
    assert inside_mask(rgb).tolist() == [[True, False, True]]
    grey_alpha = np.array([[[0.0, 0.4], [0.0, 0.6]]])  # 0.6 and 0.4 over white
    assert inside_mask(grey_alpha).tolist() == [[False, True]]


def test_a_drawn_disc_is_within_a_pixel_of_its_circle(tmp_path):
    """A disc of radius 30 pixels in a 96 x 96 PNG over [-1, 1]^2 (a pixel is 1/48): the grid is
    within a pixel of the true circle's signed distance everywhere, and the zero level of its
    bilinear interpolation, found along 90 rays, within a pixel of the circle."""
    size, radius = 96, 30.0
    row, col = np.mgrid[:size, :size] + 0.5
    disc = np.hypot(col - 48, row - 48) < radius
    spy.Bitmap(np.where(disc, 0, 255).astype(np.uint8)).write(str(tmp_path / "disc.png"))
    field = load_shape(str(tmp_path / "disc.png"), DOMAIN, resolution=512)
    pixel = 2 / size
    assert field.kind == "silhouette" and field.distance.shape == (size, size) and field.normals is None
    x, y = -1 + col * pixel, 1 - row * pixel
    true = np.hypot(x, y) - radius * pixel
    assert np.abs(field.distance - true).max() < pixel
    angle = np.linspace(0, 2 * np.pi, 90, endpoint=False)
    radii = np.linspace(0.3, 0.9, 3001)
    rays = radii[None, :, None] * np.stack([np.cos(angle), np.sin(angle)], axis=1)[:, None, :]
    values = shape_distance(field, rays.reshape(-1, 2)).reshape(90, -1)
    zero = radii[np.argmax(values > 0, axis=1)]
    assert np.all((values[:, 0] < 0) & (values[:, -1] > 0))
    assert np.abs(zero - radius * pixel).max() < pixel
    on_edges = shape_distance(field, field.points.astype(float))
    np.testing.assert_allclose(on_edges, 0, atol=1e-6)  # the samples are the edges' middles
    assert np.abs(np.hypot(*field.points.T) - radius * pixel).max() < pixel


def test_the_example_key_is_its_generator_s_drawing():
    spec = importlib.util.spec_from_file_location("make_key_png", ROOT / "tools/make_key_png.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    path = ROOT / "assets/shapes/key.png"
    assert path.stat().st_size < 8192
    field = load_shape(str(path), DOMAIN)
    np.testing.assert_array_equal(field.distance < 0, tool.key_mask())
    assert np.abs(field.distance).min() == pytest.approx(0.5 * 2 / 128)  # half a pixel at the edges


def test_a_silhouette_needs_square_pixels(tmp_path):
    spy.Bitmap(np.where(np.eye(8, 16) > 0, 0, 255).astype(np.uint8)).write(str(tmp_path / "wide.png"))
    with pytest.raises(UserError, match=r"16x8.*\[-1, 1, -0.5, 0.5\]"):
        load_shape(str(tmp_path / "wide.png"), DOMAIN)
    assert load_shape(str(tmp_path / "wide.png"), (-1, 1, -0.5, 0.5)).distance.shape == (8, 16)


def circle_csv(tmp_path, normals: bool, header: str = "") -> tuple[str, np.ndarray]:
    angle = np.linspace(0, 2 * np.pi, 200, endpoint=False)
    unit = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    points = 0.5 * unit
    rows = np.hstack([points, 3 * unit]) if normals else points  # normals of any length
    lines = [header, "# a circle of radius 0.5", ""] + [",".join(f"{v:.17g}" for v in row) for row in rows]
    path = tmp_path / "circle.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path), points


def brute_nearest(xy, points):
    squared = (xy[:, :1] - points[:, 0]) ** 2 + (xy[:, 1:] - points[:, 1]) ** 2
    return np.sqrt(squared.min(axis=1)), squared.argmin(axis=1)


@pytest.mark.parametrize("header", ["", "x,y,nx,ny", " X , Y , NX , NY "])
def test_points_with_normals_are_signed_by_the_nearest_normal(tmp_path, header):
    path, points = circle_csv(tmp_path, normals=True, header=header)
    field = load_shape(path, DOMAIN, resolution=64)
    assert field.kind == "points" and field.name == "circle.csv" and len(field.points) == 200
    np.testing.assert_allclose(np.hypot(*field.normals.T), 1, atol=1e-6)
    rows, cols = np.mgrid[:64, :64]
    centres = np.stack([-1 + (cols.ravel() + 0.5) / 32, 1 - (rows.ravel() + 0.5) / 32], axis=1)
    distance, _ = brute_nearest(centres, points)
    inside = np.hypot(*centres.T) < 0.5  # a radial normal: (p - q) . n < 0 exactly inside the circle
    np.testing.assert_allclose(field.distance.ravel(), np.where(inside, -distance, distance), atol=1e-6)
    assert field.distance.min() < -0.45 and field.distance.max() > 0.8


def test_points_without_normals_are_unsigned(tmp_path):
    path, points = circle_csv(tmp_path, normals=False, header="x,y")
    field = load_shape(path, DOMAIN, resolution=64)
    assert field.normals is None and field.distance.min() >= 0
    xy = np.random.default_rng(5).uniform(-0.99, 0.99, (500, 2))
    distance, _ = brute_nearest(xy, points)
    # bilinear between exact values at the pixel centres: within a pixel's reach of the exact ones
    assert np.abs(shape_distance(field, xy) - distance).max() < 2 / 64
