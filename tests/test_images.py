"""Image targets: every image kind the issue names loads with the right values (or is refused on
one line), the GPU's truth is the numpy twin's bilinear sample, a 64x64 image with sharp edges
is fitted past 35 dB, learned.png and summary.json's PSNR agree with numpy's PSNR of the two
images, --export-image writes K times the resolution, and a bad image leaves the window's
network as it was. Every image is made here, from numpy."""

from __future__ import annotations

import json
import struct
import subprocess
import zlib
from pathlib import Path

import numpy as np
import pytest
import slangpy as spy
from helpers import run_headless_here
from reference import grid_centres

from app.config.config import Config, validate
from app.errors import UserError
from app.train.trainer import Trainer
from app.truth import image_truth
from app.views.evaluation import GridEvaluator

# The lavapipe-sized fit: a grid whose finest level has 68 cells across, an MLP of 6 (thread accumulators)
FIT = ["--encoding", "hashgrid", "--grid-levels", "8", "--grid-table", "13", "--grid-base-resolution", "4"]
FIT += ["--hidden", "6", "--lr", "0.02", "--batch-size", "4096"]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def _png(path: Path, width: int, height: int, colour_type: int, rows: bytes, extra: bytes = b"") -> None:
    header = struct.pack(">IIBBBBB", width, height, 8, colour_type, 0, 0, 0)
    body = _chunk(b"IHDR", header) + extra + _chunk(b"IDAT", zlib.compress(rows)) + _chunk(b"IEND", b"")
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + body)


def sharp_edges(size: int = 64) -> np.ndarray:
    """A greyscale test image with sharp edges: a checkerboard, a disc and a bright square."""
    y, x = np.mgrid[0:size, 0:size]
    image = np.where((x // 16 + y // 16) % 2, 0.9, 0.1)
    image = np.where((x - 40) ** 2 + (y - 22) ** 2 < 150, 0.5, image)
    image = np.where((x > 8) & (x < 20) & (y > 40) & (y < 56), 1.0, image)
    return np.round(image * 255).astype(np.uint8)


def test_each_kind_of_image_loads_with_its_values(tmp_path):
    rng = np.random.default_rng(0)
    cases = {
        "grey.png": rng.integers(0, 256, (5, 7), dtype=np.uint8),
        "grey-alpha.png": rng.integers(0, 256, (5, 7, 2), dtype=np.uint8),
        "rgb.png": rng.integers(0, 256, (5, 7, 3), dtype=np.uint8),
        "rgba.png": rng.integers(0, 256, (5, 7, 4), dtype=np.uint8),
        "sixteen-bit.png": rng.integers(0, 65536, (5, 7, 3), dtype=np.uint16),
    }
    for name, pixels in cases.items():
        spy.Bitmap(pixels).write(str(tmp_path / name))
        info, loaded = image_truth.load(tmp_path / name)
        scale = 65535.0 if pixels.dtype == np.uint16 else 255.0
        expected = (pixels.reshape(5, 7, -1) / scale).astype(np.float32)
        assert (info["width"], info["height"], info["channels"]) == (7, 5, expected.shape[2]), name
        np.testing.assert_array_equal(loaded, expected, err_msg=name)
    # a palette PNG arrives expanded to RGB
    index = rng.integers(0, 3, (4, 6), dtype=np.uint8)
    palette = np.array([[255, 0, 0], [0, 128, 255], [10, 20, 30]], np.uint8)
    rows = b"".join(b"\x00" + index[r].tobytes() for r in range(4))
    _png(tmp_path / "palette.png", 6, 4, 3, rows, _chunk(b"PLTE", palette.tobytes()))
    _, loaded = image_truth.load(tmp_path / "palette.png")
    np.testing.assert_array_equal(loaded, palette[index] / np.float32(255.0))
    # a JPEG: lossy, so close
    smooth = np.round(
        np.stack([*np.meshgrid(np.linspace(0, 255, 16), np.linspace(255, 0, 12)), np.full((12, 16), 90.0)], -1)
    )
    spy.Bitmap(smooth.astype(np.uint8)).write(str(tmp_path / "photo.jpg"))
    info, loaded = image_truth.load(tmp_path / "photo.jpg")
    assert info["channels"] == 3 and np.abs(loaded - smooth / 255.0).mean() < 0.03


BAD = {
    "corrupt": lambda p: p.write_bytes(
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0)) + b"garbage" * 20
    ),
    "truncated": lambda p: p.write_bytes(_truncated(p)),
    "truncated jpeg": lambda p: p.write_bytes(_truncated_jpeg(p)),
    "0x0": lambda p: _png(p, 0, 0, 0, b""),
    "1x1": lambda p: spy.Bitmap(np.zeros((1, 1), np.uint8)).write(str(p)),
    "16384x16384": lambda p: _png(p, 16384, 16384, 2, b"\x00" * 64),
    "a folder": lambda p: p.mkdir(),
    "text named .png": lambda p: p.write_text("not an image\n"),
    "missing": lambda p: None,
}
WORDS = {
    "corrupt": "cannot be decoded",
    "truncated": "cannot be decoded",
    "truncated jpeg": "cut short",
    "0x0": "at least 2x2",
    "1x1": "at least 2x2",
    "16384x16384": "at most 8192",
    "a folder": "folder",
    "text named .png": "not a PNG or JPEG",
    "missing": "cannot read",
}


def _truncated(path: Path) -> bytes:
    spy.Bitmap(sharp_edges(32)).write(str(path))
    return path.read_bytes()[:80]


def _truncated_jpeg(path: Path) -> bytes:
    """A photo-like JPEG cut to a third: libjpeg decodes it with a warning, the rest grey."""
    jpeg = path.with_suffix(".jpg")
    y, x = np.mgrid[0:96, 0:128]
    spy.Bitmap(np.stack([x * 2, y * 2, (x + y)], -1).astype(np.uint8)).write(str(jpeg))
    whole = jpeg.read_bytes()
    assert image_truth.jpeg_is_whole(whole)
    return whole[: len(whole) // 3]


@pytest.mark.parametrize("kind", BAD)
def test_a_bad_image_is_one_line(tmp_path, kind):
    path = tmp_path / "bad.png"
    BAD[kind](path)
    with pytest.raises(UserError) as caught:
        image_truth.load(path)
    message = str(caught.value)
    assert WORDS[kind] in message and "\n" not in message, message


def test_gpu_truth_is_the_numpy_bilinear_sample(gpu, tmp_path):
    pixels = np.random.default_rng(1).integers(0, 256, (6, 9, 3), dtype=np.uint8)
    spy.Bitmap(pixels).write(str(tmp_path / "small.png"))
    info, loaded = image_truth.load(tmp_path / "small.png")
    config = validate(Config(image=info, domain=image_truth.aspect_domain(9, 6), hidden=[4]))
    assert config.output_dim == 3 and config.domain == [-1.0, 1.0, -6 / 9, 6 / 9]
    evaluation = GridEvaluator(Trainer(gpu, config), 40).evaluate()
    x, y = grid_centres(config.domain, 40)
    expected = image_truth.sample(loaded, config.domain, x.ravel(), y.ravel())
    np.testing.assert_allclose(evaluation.truths.reshape(-1, 3), expected, atol=2e-6)
    # at a pixel's centre the sample is the pixel itself; row 0 is the image's top
    cx, cy = image_truth.pixel_centres(config.domain, 9, 6)
    np.testing.assert_allclose(
        image_truth.sample(loaded, config.domain, cx.ravel(), cy.ravel()), loaded.reshape(-1, 3), atol=1e-6
    )


def _bilinear_by_interp(pixels: np.ndarray, domain, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Bilinear sampling from its definition, by np.interp along each axis: the image spans the
    domain, pixel centres sit at (i + 0.5) / size of it (row 0 at the top), values vary linearly
    between neighbouring centres and stay at the edge pixel's value beyond the outermost ones."""
    height, width, channels = pixels.shape
    x0, x1, y0, y1 = domain
    cx = x0 + (np.arange(width) + 0.5) / width * (x1 - x0)
    cy = y1 - (np.arange(height) + 0.5) / height * (y1 - y0)  # decreasing: row 0 is the top
    out = np.zeros((len(x), channels))
    for n, (px, py) in enumerate(zip(x, y)):
        rows = np.array([[np.interp(px, cx, pixels[r, :, c]) for c in range(channels)] for r in range(height)])
        out[n] = [np.interp(py, cy[::-1], rows[::-1, c]) for c in range(channels)]
    return out


def test_gpu_truth_between_pixel_centres_is_bilinear(gpu, tmp_path):
    """Where nearest-neighbour sampling would differ: a 4 x 4 image on an 8 x 8 grid, whose cell
    centres fall a quarter of the way between pixel centres, and beyond the outermost ones."""
    pixels = np.random.default_rng(3).integers(0, 256, (4, 4, 1), dtype=np.uint8)
    spy.Bitmap(pixels[:, :, 0].copy()).write(str(tmp_path / "four.png"))
    info, loaded = image_truth.load(tmp_path / "four.png")
    config = validate(Config(image=info, domain=[-1.0, 1.0, -1.0, 1.0], hidden=[4]))
    truths = GridEvaluator(Trainer(gpu, config), 8).evaluate().truths.reshape(-1, 1)
    x, y = grid_centres(config.domain, 8)
    expected = _bilinear_by_interp(loaded, config.domain, x.ravel(), y.ravel())
    np.testing.assert_allclose(truths, expected, atol=2e-6)
    np.testing.assert_allclose(image_truth.sample(loaded, config.domain, x.ravel(), y.ravel()), expected, atol=1e-12)
    # the midpoint of the two top-left pixels' centres is their mean: no nearest pixel gives that
    mid = image_truth.sample(loaded, config.domain, np.array([-0.5]), np.array([0.75]))[0, 0]
    assert mid == pytest.approx((loaded[0, 0, 0] + loaded[0, 1, 0]) / 2)


def _headless(gpu, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return run_headless_here(gpu, tmp_path, *args)


def _psnr(a: np.ndarray, b: np.ndarray) -> float:
    return float(10 * np.log10(1.0 / np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)))


def test_sharp_edged_image_fits_past_35_db_and_the_files_agree(gpu, tmp_path):
    truth = sharp_edges()
    spy.Bitmap(truth).write(str(tmp_path / "edges.png"))
    out, big = tmp_path / "run", tmp_path / "big.png"
    result = _headless(
        gpu, tmp_path, "--image", str(tmp_path / "edges.png"), *FIT, "--iterations", "700", "--eval-every", "700",
        "--out", str(out), "--export-image", str(big), "--export-scale", "2",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["psnr"] >= 35.0, summary["psnr"]
    learned = np.asarray(spy.Bitmap(str(out / "learned.png")))
    assert learned.shape == truth.shape and learned.dtype == np.uint8
    # learned.png holds the outputs rounded to 8 bits: its PSNR is the summary's within that rounding
    assert abs(_psnr(learned / 255.0, truth / 255.0) - summary["psnr"]) < 0.1
    assert f"PSNR {summary['psnr']:.2f} dB" in result.stdout
    twice = np.asarray(spy.Bitmap(str(big)))
    assert twice.shape == (128, 128)
    blocks = twice.reshape(64, 2, 64, 2).mean(axis=(1, 3))  # the 2x image, averaged back
    assert _psnr(blocks / 255.0, truth / 255.0) > 25.0  # upside down or shifted: ~10 dB


def test_bad_image_on_the_command_line_is_one_line(gpu, tmp_path):
    (tmp_path / "text.png").write_text("hello")
    result = _headless(
        gpu, tmp_path, "--image", str(tmp_path / "text.png"), "--iterations", "1", "--out", str(tmp_path / "o")
    )
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(lines) == 1 and "not a PNG or JPEG" in lines[0], result.stderr
    assert not (tmp_path / "o").exists()
    both = _headless(gpu, tmp_path, "--image", str(tmp_path / "text.png"), "--target", "x", "--iterations", "1")
    assert both.returncode == 2 and "use --target or --image, not both" in both.stderr


def test_resume_of_an_image_run_is_byte_identical_and_needs_the_same_file(gpu, tmp_path):
    """A grid network fitting an image, checkpointed after 20 steps and resumed to 40: the same
    parameters, optimizer state and learned image as 40 steps never stopped. Resuming once the
    image file has changed is refused."""
    from app.files import checkpoint as ckpt
    from app.loop.session import Session

    spy.Bitmap(sharp_edges(32)).write(str(tmp_path / "edges.png"))
    info, _ = image_truth.load(tmp_path / "edges.png")
    grid = dict(encoding="hashgrid", grid_levels=8, grid_log2_size=13, grid_base_resolution=4, hidden=[6], lr=0.02)
    config = validate(Config(image=info, domain=image_truth.aspect_domain(32, 32), batch_size=2048, **grid))
    whole, first = Session(gpu, config), Session(gpu, config)
    whole.advance(40)
    first.advance(20)
    data = ckpt.encode(ckpt.capture(first))
    resumed = Session(gpu, config)
    ckpt.restore(resumed, ckpt.decode(data))
    resumed.advance(20)
    for a, b in ((whole.trainer.parameters(), resumed.trainer.parameters()),
                 (whole.trainer.optimizer_state_values(), resumed.trainer.optimizer_state_values())):  # fmt: skip
        assert a.tobytes() == b.tobytes()
    whole.evaluate()
    resumed.evaluate()
    assert whole.image.learned().tobytes() == resumed.image.learned().tobytes() and whole.image.psnr > 15
    spy.Bitmap(sharp_edges(32)[::-1].copy()).write(str(tmp_path / "edges.png"))  # the file changes
    image_truth._cache.clear()  # as a new process starts
    with pytest.raises(UserError, match="has changed since this run used it"):
        Session(gpu, ckpt.decode(data).config)


def test_gradient_check_passes_with_an_image_truth(gpu, tmp_path):
    """The independent path takes an image's truth from its numpy twin."""
    from app.check import grad_check

    pixels = np.random.default_rng(3).integers(0, 256, (12, 16, 4), dtype=np.uint8)
    spy.Bitmap(pixels).write(str(tmp_path / "rgba.png"))
    info, _ = image_truth.load(tmp_path / "rgba.png")
    grid = dict(encoding="hashgrid", grid_levels=4, grid_log2_size=10, grid_base_resolution=4, hidden=[4])
    trainer = Trainer(gpu, validate(Config(image=info, domain=image_truth.aspect_domain(16, 12), seed=2, **grid)))
    trainer.train(10)
    check = grad_check.run(trainer)
    assert check.passed and check.parameters == trainer.plan.param_count, check.detail()


def test_a_saved_image_target_whose_file_is_gone_is_dropped(tmp_path, capsys):
    """The window's next launch restores the last config: without its image file, it starts from
    the expressions rather than failing."""
    from app.files.saved import saved_config

    spy.Bitmap(sharp_edges(8)).write(str(tmp_path / "gone.png"))
    info, _ = image_truth.load(tmp_path / "gone.png")
    config = validate(Config(image=info, domain=image_truth.aspect_domain(8, 8)))
    (tmp_path / "gone.png").unlink()
    image_truth._cache.clear()
    restored = saved_config({"config": config.to_dict()})
    assert restored is not None and restored.image is None and restored.domain == Config().domain
    assert "saved image target is not used" in capsys.readouterr().err
