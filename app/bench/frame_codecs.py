"""Codecs for the served window's frames, measured on real UI frames (app/bench/serve.py keeps some
while training): libjpeg-turbo through simplejpeg at a few qualities, and WebP through Pillow where
it has WebP. Encode time on one thread, bytes a frame, and PSNR against the frame's pixels."""

from __future__ import annotations

import io
import statistics
import time

import numpy as np
import simplejpeg


def _jpeg(quality: int, subsampling: str):
    def encode(pixels: np.ndarray) -> bytes:
        return simplejpeg.encode_jpeg(pixels, quality=quality, colorspace="RGBA", colorsubsampling=subsampling)

    return encode, lambda data: simplejpeg.decode_jpeg(data, colorspace="RGB")


def _webp(quality: int, method: int, lossless: bool = False):
    from PIL import Image

    def encode(pixels: np.ndarray) -> bytes:
        out = io.BytesIO()  # RGBA to RGB inside: an opaque frame's alpha would be encoded too
        Image.fromarray(pixels[..., :3]).save(out, "WEBP", quality=quality, method=method, lossless=lossless)
        return out.getvalue()

    return encode, lambda data: np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def webp_available() -> bool:
    try:
        from PIL import features
    except ImportError:
        return False
    return bool(features.check("webp"))


def codecs() -> dict:
    """name: (encode RGBA pixels -> bytes, decode bytes -> RGB pixels)."""
    found = {
        "jpeg q75 4:4:4": _jpeg(75, "444"),
        "jpeg q85 4:4:4 (used)": _jpeg(85, "444"),
        "jpeg q95 4:4:4": _jpeg(95, "444"),
        "jpeg q85 4:2:0": _jpeg(85, "420"),
    }
    if webp_available():
        found |= {
            "webp q80 method 0": _webp(80, 0),
            "webp q80 method 4": _webp(80, 4),
            "webp lossless method 0": _webp(100, 0, lossless=True),
        }
    return found


def psnr(reference: np.ndarray, decoded: np.ndarray) -> float:
    error = np.mean((reference.astype(np.float32) - decoded.astype(np.float32)) ** 2)
    return float("inf") if error == 0 else float(10 * np.log10(255.0**2 / error))


def measure(frames: list[np.ndarray], repeats: int = 3) -> list[dict]:
    """Each codec on each of `frames` (RGBA, height x width x 4): median encode ms (best of
    `repeats` a frame), mean bytes a frame, the lowest PSNR over the frames."""
    rows = []
    for name, (encode, decode) in codecs().items():
        times, sizes, quality = [], [], []
        for pixels in frames:
            best = float("inf")
            for _ in range(repeats):
                began = time.perf_counter()
                data = encode(pixels)
                best = min(best, time.perf_counter() - began)
            times.append(best)
            sizes.append(len(data))
            quality.append(psnr(pixels[..., :3], decode(data)))
        rows.append(
            {
                "codec": name,
                "encode_ms": statistics.median(times) * 1000,
                "bytes": statistics.mean(sizes),
                "psnr_db": min(quality),
            }
        )
    return rows


def print_rows(rows: list[dict], frames: list[np.ndarray]) -> None:
    if not frames:
        print("codecs: no frames kept")
        return
    height, width = frames[0].shape[:2]
    print(f"codecs on {len(frames)} frames of {width}x{height} kept while training (one thread):")
    print(f"  {'codec':<24} {'encode ms':>9} {'kB/frame':>9} {'PSNR dB (lowest)':>17}")
    for row in rows:
        print(f"  {row['codec']:<24} {row['encode_ms']:9.1f} {row['bytes'] / 1000:9.0f} {row['psnr_db']:17.1f}")
