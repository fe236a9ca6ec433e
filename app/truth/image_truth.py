"""Image targets: a PNG or JPEG file as the ground truth, a channel an output, spanning the domain,
sampled bilinearly; this module is the numpy twin of shaders/truth/image_truth.slang. Files are
checked from their header before SlangPy's reader decodes them, and anything else is a one-line
UserError (docs/formats.md, 'Input files'; docs/architecture.md, 'Targets and truths')."""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import UserError, first_line, read_user_bytes

MIN_SIDE = 2
MAX_SIDE = 8192
MAX_PIXELS = 1 << 24  # 16.8 megapixels: 4096 x 4096
MAX_FILE_BYTES = 256 << 20
CHANNEL_NAMES = {1: ["grey"], 2: ["grey", "alpha"], 3: ["red", "green", "blue"], 4: ["red", "green", "blue", "alpha"]}
_PNG = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class ImageTruth:
    """A plan's image truth (Config.image): its size, channels and content's digest; the pixels
    reach the kernels through a buffer (upload_pixels)."""

    file: str
    width: int
    height: int
    channels: int
    sha256: str


_JPEG_SIZE_MARKERS = set(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}  # start-of-frame markers


def _png_size(data: bytes) -> tuple[int, int]:
    if len(data) < 24 or data[12:16] != b"IHDR":
        raise ValueError("no PNG header")
    return struct.unpack(">II", data[16:24])


def _jpeg_size(data: bytes) -> tuple[int, int]:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            raise ValueError("not a JPEG marker")
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _JPEG_SIZE_MARKERS:
            if at + 9 > len(data):
                break
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        at += 2 + length
    raise ValueError("no JPEG frame header")


def jpeg_is_whole(data: bytes) -> bool:
    """Whether a JPEG's data ends its last scan with the end-of-image marker (FF D9). libjpeg
    decodes a file cut short with a warning only, the rest of the image grey; an FF D9 can't stand
    inside a scan's data, where FF is always followed by 00 or a restart marker."""
    scan = data.rfind(b"\xff\xda")
    return scan != -1 and data.rfind(b"\xff\xd9") > scan


def header_size(data: bytes) -> tuple[str, int, int]:
    """("png" or "jpeg", width, height) from the file's first bytes, without decoding it."""
    if data.startswith(_PNG):
        return ("png", *_png_size(data))
    if data.startswith(b"\xff\xd8"):
        return ("jpeg", *_jpeg_size(data))
    raise ValueError("not a PNG or JPEG file")


def _check_size(name: str, width: int, height: int) -> None:
    if width < MIN_SIDE or height < MIN_SIDE:
        raise UserError(f"image {name} is {width}x{height}: it must be at least {MIN_SIDE}x{MIN_SIDE}")
    if width > MAX_SIDE or height > MAX_SIDE or width * height > MAX_PIXELS:
        raise UserError(
            f"image {name} is {width}x{height}: at most {MAX_SIDE} pixels a side and {MAX_PIXELS:,} pixels in all"
        )


def _read(path: str | Path) -> bytes:
    if Path(path).is_dir():
        raise UserError(f"image {str(path)!r} is a folder, not a file")
    return read_user_bytes(path, "image", MAX_FILE_BYTES)


def _decode(path: str | Path, name: str) -> np.ndarray:
    """The pixels as float32 (H, W, C) in [0, 1], through SlangPy's reader."""
    import slangpy as spy

    try:
        bitmap = spy.Bitmap(str(path))
        pixels = np.array(bitmap, copy=True)
    except Exception as error:  # sgl reports a bad file as a RuntimeError with its source line
        raise UserError(f"image {name} cannot be decoded: {first_line(error)}") from None
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.dtype == np.uint8:
        scale = 255.0
    elif pixels.dtype == np.uint16:
        scale = 65535.0
    else:
        raise UserError(f"image {name} has {pixels.dtype} pixels; PNG and JPEG images have 8 or 16 bits")
    if pixels.shape[2] not in CHANNEL_NAMES:
        raise UserError(f"image {name} has {pixels.shape[2]} channels; 1 to 4 can be learned")
    return (pixels.astype(np.float32) / np.float32(scale)).astype(np.float32)


def load(path: str | Path) -> tuple[dict[str, Any], np.ndarray]:
    """Config.image for the file at `path` and its pixels (H, W, C); a UserError of one line for
    anything that is not a usable PNG or JPEG image."""
    name = repr(str(path))
    data = _read(path)
    try:
        kind, width, height = header_size(data)
    except (ValueError, struct.error) as error:
        raise UserError(f"image {name} is not a PNG or JPEG image ({error})") from None
    _check_size(name, width, height)
    if kind == "jpeg" and not jpeg_is_whole(data):
        raise UserError(f"image {name} is cut short: its JPEG data stops before the image's end (a partial copy?)")
    pixels = _decode(path, name)
    if pixels.shape[:2] != (height, width):
        raise UserError(f"image {name} decodes to {pixels.shape[1]}x{pixels.shape[0]}, not its header's size")
    info = {
        "file": str(Path(path).resolve()),
        "width": width,
        "height": height,
        "channels": int(pixels.shape[2]),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    _cache[info["sha256"]] = pixels
    return info, pixels


_cache: dict[str, np.ndarray] = {}


def pixels_of(image: dict[str, Any]) -> np.ndarray:
    """The pixels of Config.image, from the file it names (once per content): a UserError if the
    file is gone or has changed since it was chosen."""
    if image["sha256"] in _cache:
        return _cache[image["sha256"]]
    info, pixels = load(image["file"])
    if info["sha256"] != image["sha256"]:
        raise UserError(f"image {image['file']!r} has changed since this run used it (its SHA-256 differs)")
    return pixels


def upload_pixels(gpu, image: dict | None):
    """A GPU buffer of Config.image's pixels (float32, row-major from the top, channels
    interleaved), or a 4-byte one where there is no image."""
    if image is None:
        return gpu.buffer(4)
    pixels = pixels_of(image)
    buffer = gpu.buffer(pixels.nbytes)
    gpu.write(buffer, pixels)
    return buffer


def check_image(label: str, value: Any) -> dict | None:
    """Config.image's check: None, or what `load` returns as the config's record of a file."""
    if value is None:
        return None
    keys = {"file", "width", "height", "channels", "sha256"}
    if not isinstance(value, dict) or set(value) != keys:
        raise UserError(f"{label} must be null or {{{', '.join(sorted(keys))}}}")
    if not isinstance(value["file"], str) or not isinstance(value["sha256"], str):
        raise UserError(f"{label}'s file and sha256 must be text")
    for key in ("width", "height", "channels"):
        if isinstance(value[key], bool) or not isinstance(value[key], int):
            raise UserError(f"{label}'s {key} must be a whole number")
    _check_size(repr(value["file"]), value["width"], value["height"])
    if value["channels"] not in CHANNEL_NAMES:
        raise UserError(f"{label}'s channels must be 1 to 4")
    return value


def aspect_domain(width: int, height: int) -> list[float]:
    """[x0, x1, y0, y1]: [-1, 1] along the longer side, the image's aspect ratio kept."""
    if width >= height:
        half = height / width
        return [-1.0, 1.0, -half, half]
    half = width / height
    return [-half, half, -1.0, 1.0]


def pixel_centres(domain, width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """x and y of each pixel's centre, (H, W) each, row 0 at the top (y1)."""
    x0, x1, y0, y1 = domain
    x = x0 + (np.arange(width) + 0.5) / width * (x1 - x0)
    y = y1 - (np.arange(height) + 0.5) / height * (y1 - y0)
    return np.meshgrid(x, y)


def sample(pixels: np.ndarray, domain, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The numpy twin of imageTruth: (N,) points to (N, C), bilinear, edges extended, float64."""
    height, width, _ = pixels.shape
    x0, x1, y0, y1 = domain
    px = (np.asarray(x, np.float64) - x0) / (x1 - x0) * width - 0.5
    py = (y1 - np.asarray(y, np.float64)) / (y1 - y0) * height - 0.5
    c0, r0 = np.floor(px), np.floor(py)
    fx, fy = (px - c0)[:, None], (py - r0)[:, None]
    c0, r0 = c0.astype(np.int64), r0.astype(np.int64)
    c1, r1 = np.clip(c0 + 1, 0, width - 1), np.clip(r0 + 1, 0, height - 1)
    c0, r0 = np.clip(c0, 0, width - 1), np.clip(r0, 0, height - 1)
    p = pixels.astype(np.float64)
    top = (1 - fx) * p[r0, c0] + fx * p[r0, c1]
    bottom = (1 - fx) * p[r1, c0] + fx * p[r1, c1]
    return (1 - fy) * top + fy * bottom


def to_png_array(values: np.ndarray) -> np.ndarray:
    """(H, W, C) values as 8-bit pixels, clamped to [0, 1] and rounded."""
    return np.round(np.clip(values, 0.0, 1.0) * 255.0).astype(np.uint8)
