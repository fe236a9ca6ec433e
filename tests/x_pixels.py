"""The pixels an X server holds for a window, read with Xlib's XGetImage through ctypes (libX11 is
there wherever Xvfb and xdotool are): what the real window shows, to hold against the offscreen
render of the same frame."""

from __future__ import annotations

import ctypes

import numpy as np

Z_PIXMAP = 2
ALL_PLANES = ctypes.c_ulong(-1 & 0xFFFFFFFFFFFFFFFF)


class XImage(ctypes.Structure):
    _fields_ = [
        ("width", ctypes.c_int),
        ("height", ctypes.c_int),
        ("xoffset", ctypes.c_int),
        ("format", ctypes.c_int),
        ("data", ctypes.POINTER(ctypes.c_ubyte)),
        ("byte_order", ctypes.c_int),
        ("bitmap_unit", ctypes.c_int),
        ("bitmap_bit_order", ctypes.c_int),
        ("bitmap_pad", ctypes.c_int),
        ("depth", ctypes.c_int),
        ("bytes_per_line", ctypes.c_int),
        ("bits_per_pixel", ctypes.c_int),
        ("red_mask", ctypes.c_ulong),
        ("green_mask", ctypes.c_ulong),
        ("blue_mask", ctypes.c_ulong),
    ]


def window_pixels(display: str, window: int, width: int, height: int) -> np.ndarray:
    """(height, width, 3) uint8 RGB of `window` on `display` (24-bit TrueColor, as Xvfb's screen)."""
    x11 = ctypes.CDLL("libX11.so.6")
    x11.XOpenDisplay.restype = ctypes.c_void_p
    x11.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x11.XGetImage.restype = ctypes.POINTER(XImage)
    x11.XGetImage.argtypes = [ctypes.c_void_p, ctypes.c_ulong, ctypes.c_int, ctypes.c_int]
    x11.XGetImage.argtypes += [ctypes.c_uint, ctypes.c_uint, ctypes.c_ulong, ctypes.c_int]
    x11.XCloseDisplay.argtypes = [ctypes.c_void_p]
    connection = x11.XOpenDisplay(display.encode())
    assert connection, f"cannot open display {display}"
    try:
        image = x11.XGetImage(connection, window, 0, 0, width, height, ALL_PLANES, Z_PIXMAP).contents
        assert image.bits_per_pixel == 32 and image.depth == 24, (image.bits_per_pixel, image.depth)
        raw = np.ctypeslib.as_array(image.data, (image.bytes_per_line * image.height,))
        rows = raw.reshape(image.height, image.bytes_per_line)[:, : 4 * image.width].reshape(
            image.height, image.width, 4
        )
        shifts = [int(mask).bit_length() - 8 for mask in (image.red_mask, image.green_mask, image.blue_mask)]
        words = rows.view("<u4")[..., 0]
        return np.stack([(words >> shift) & 0xFF for shift in shifts], axis=-1).astype(np.uint8)
    finally:
        x11.XCloseDisplay(connection)
