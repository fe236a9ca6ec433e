"""The serve benchmark's parts that need no app: the codecs' figures on a frame, and how it tells
from a frame's pixels whether the Pause button shows Pause or Play (app/bench/serve.py)."""

import numpy as np
import pytest
import simplejpeg
from PIL import Image, ImageDraw

from app.bench import frame_codecs
from app.bench.serve import _Button

BUTTON = (20.0, 10.0, 220.0, 34.0)  # x0, y0, x1, y1


def frame_with(label: str, colour=(40, 90, 160), shift: int = 0) -> bytes:
    """A 320x64 frame (JPEG) with a button at BUTTON in `colour`, its label moved `shift` pixels."""
    image = Image.new("RGB", (320, 64), (30, 32, 40))
    draw = ImageDraw.Draw(image)
    x0, y0, x1, y1 = BUTTON
    draw.rectangle((x0, y0, x1 - 1, y1 - 1), fill=colour)
    draw.text((80 + shift, 16), label, fill=(235, 235, 235))
    pixels = np.dstack([np.asarray(image), np.full((64, 320), 255, np.uint8)])
    return simplejpeg.encode_jpeg(pixels, quality=85, colorspace="RGBA", colorsubsampling="444")


@pytest.fixture
def button() -> _Button:
    made = _Button(BUTTON)
    made.looks[True] = made.look(frame_with("Pause (Space)"))
    made.looks[False] = made.look(frame_with("Play (Space)"))
    return made


def shows_play(button: _Button, jpeg: bytes) -> bool:
    return button.shows(button.look(jpeg), False)


def test_the_label_is_read_whatever_the_colour_and_position(button):
    assert button.label_gap > 0.2
    for shift in (-7, 0, 7):  # a scrollbar that comes or goes moves the centred label
        for colour in ((40, 90, 160), (70, 140, 230)):  # hovered, held
            assert shows_play(button, frame_with("Play (Space)", colour, shift))
            assert not shows_play(button, frame_with("Pause (Space)", colour, shift))


def test_a_press_changes_the_colour_not_the_label(button):
    held = button.look(frame_with("Pause (Space)", (70, 140, 230)))
    assert button.distance(held, True) > 0.25 * button.gap, "the press is seen"
    assert button.shows(held, True) and not button.shows(held, False), "still Pause"


def test_codecs_measure_size_time_and_fidelity():
    rng = np.random.default_rng(0)
    pixels = np.full((200, 320, 4), 255, np.uint8)
    pixels[..., :3] = 40
    pixels[50:150, 20:300, :3] = rng.integers(0, 255, (100, 280, 3), dtype=np.uint8)
    rows = {row["codec"]: row for row in frame_codecs.measure([pixels], repeats=1)}
    low, high = rows["jpeg q75 4:4:4"], rows["jpeg q95 4:4:4"]
    assert high["psnr_db"] > low["psnr_db"] and high["bytes"] > low["bytes"]
    assert all(row["encode_ms"] > 0 for row in rows.values())
    if frame_codecs.webp_available():
        assert rows["webp lossless method 0"]["psnr_db"] == float("inf")
