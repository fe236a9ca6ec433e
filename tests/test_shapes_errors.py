"""Every bad shape, file or domain is a UserError of one line that names it."""

import numpy as np
import pytest
import slangpy as spy

from app.errors import UserError
from app.truth.shapes import load_shape

DOMAIN = (-1.0, 1.0, -1.0, 1.0)
SVG = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">{}</svg>'


def write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, np.ndarray):
        spy.Bitmap(content).write(str(path))
    else:
        path.write_text(content)
    return str(path)


FILES = {
    "no path": ("a.svg", SVG.format("<text>hi</text>"), r"a\.svg' has no filled path or shape"),
    "not XML": (
        "b.svg",
        "<svg><path d='M0 0'></svg",
        r"b\.svg' does not parse as XML: unclosed token: line 1, column 20",
    ),
    "not SVG": ("c.svg", "<html/>", r"c\.svg' is not an SVG image: its root element is <html>"),
    "arc": ("d.svg", SVG.format('<path d="M0 0 A 5 5 0 0 1 10 10 Z"/>'), r"the arc command 'A', which is not"),
    "bad data": (
        "e.svg",
        SVG.format('<path d="M0 0 L 1 ! Z"/>'),
        r"<path>: cannot read path data at character 10: '! Z'",
    ),
    "no move": ("f.svg", SVG.format('<path d="L 1 1"/>'), r"must start with a move \(M or m\), not 'L'"),
    "one number": ("g1.svg", SVG.format('<path d="M 1 1 H"/>'), r"path command 'H' needs 1 number$"),
    "short": ("g.svg", SVG.format('<path d="M 1 1 C 2 2 3"/>'), r"path command 'C' needs 6 numbers"),
    "use": ("h.svg", SVG.format('<use href="#x"/>'), r"h\.svg': <use> elements are not supported"),
    "transform": ("i.svg", SVG.format('<g transform="spin(3)"><path d="M0 0h9v9z"/></g>'), r"cannot read transform"),
    "all light": ("white.png", np.full((8, 8), 255, np.uint8), r"white\.png' is all light"),
    "all dark": ("black.png", np.zeros((8, 8), np.uint8), r"black\.png' is all dark"),
    "not an image": ("j.png", "hello", r"image '.*j\.png' is not a PNG or JPEG image"),
    "empty csv": ("k.csv", "x,y\n\n", r"points file '.*k\.csv' has 0 points: at least 3"),
    "two points": ("l.csv", "0,0\n1,1\n", r"has 2 points: at least 3 are needed"),
    "one point": ("k1.csv", "0,0\n", r"has 1 point: at least 3 are needed"),
    "bad line": ("m.csv", "0,0\n1,1\n1,zz\n", r"m\.csv' line 3, column 2 \(y\): 'zz' is not a number"),
    "short line": ("m2.csv", "0,0\n1,1\n1\n", r"line 3: expected 2 numbers like the lines before it, got 1 field: '1'"),
    "bad columns": ("n.csv", "0,0,1\n", r"n\.csv' line 1: expected x,y or x,y,nx,ny .*got 3 fields"),
    "zero normal": ("o.csv", "0,0,1,0\n1,0,0,0\n1,1,0,1\n", r"o\.csv' line 2: the normal \(nx, ny\) is zero"),
    "not finite": ("p.csv", "0,0\nnan,1\n", r"p\.csv' line 2, column 1 \(x\): 'nan' is not a finite number"),
    "NaN normal": ("p4.csv", "0,0,1,0\n1,0,0,1\n1,1,nan,1\n", r"line 3, column 3 \(nx\): 'nan' is not a finite"),
    "outside": ("q.csv", "5,5\n6,5\n6,6\n", r"q\.csv' lies entirely outside the domain \[-1, 1, -1, 1\]"),
}


@pytest.mark.parametrize("case", FILES, ids=FILES)
def test_a_bad_file_is_one_line_naming_it(tmp_path, case):
    name, content, message = FILES[case]
    with pytest.raises(UserError, match=message) as caught:
        load_shape(write(tmp_path, name, content), DOMAIN, resolution=16)
    assert "\n" not in str(caught.value) and name in str(caught.value)


@pytest.mark.parametrize("name", ["gone.svg", "gone.png", "gone.csv"])
def test_a_missing_file(tmp_path, name):
    with pytest.raises(UserError, match=rf"cannot read .*{name}': No such file or directory"):
        load_shape(str(tmp_path / name), DOMAIN)


SPECS = {
    "unknown": (
        "blob",
        DOMAIN,
        r"shape 'blob': no built-in shape 'blob'; choose one of circle, box, rounded-box, ring",
    ),
    "three": ("circle+box+ring", DOMAIN, r"'circle\+box\+ring' joins 3 shapes"),
    "empty": ("", DOMAIN, r"a shape must be a built-in"),
    "outside": ("circle", (5, 6, 5, 6), r"shape 'circle' lies entirely outside the domain \[5, 6, 5, 6\]"),
    "covers": ("circle", (-0.1, 0.1, -0.1, 0.1), r"shape 'circle' covers all of the domain"),
    "bad domain": ("circle", (1, -1, -1, 1), r"domain \[1, -1, -1, 1\] must be finite with x0 < x1"),
    "not a domain": ("circle", (1, 2), r"domain must be four numbers"),
}


@pytest.mark.parametrize("case", SPECS, ids=SPECS)
def test_a_bad_spec_or_domain(case):
    spec, domain, message = SPECS[case]
    with pytest.raises(UserError, match=message) as caught:
        load_shape(spec, domain, resolution=16)
    assert "\n" not in str(caught.value)


def test_a_bad_resolution():
    with pytest.raises(UserError, match="resolution is 5000: it must be 8 to 4096"):
        load_shape("circle", DOMAIN, resolution=5000)
