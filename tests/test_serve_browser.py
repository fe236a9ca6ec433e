"""--serve in a real browser: Debian's Chromium driven by Playwright (executable_path, nothing
downloaded), against one served app. The page's pixels against the server's own frame, a click, a
drag, typing, an upload and downloads, the token and Origin checks, two viewers, and a viewer that
reads nothing. Each test sets the state it needs. tests/test_serve.py tests the rest without a browser."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import simplejpeg
import slangpy as spy
from helpers import ROOT
from imgui_bundle import imgui
from playwright.sync_api import Page, sync_playwright

from app.files import checkpoint
from app.serve.frame_encoder import QUALITY

CHROMIUM = "/usr/bin/chromium"  # Debian's package (scripts/setup.sh installs it)
SIZE = {"width": 1280, "height": 800}  # the page's viewport: the UI's size at devicePixelRatio 1
WAIT_MS = 60_000  # any one wait on the page; the first frame waits for the app's kernels
START_S = 120  # the app's start, to its URL
REBUILD_S = 120  # a network rebuilt: its kernels compile (on lavapipe, with empty caches, ~40 s)
# The page's canvas against the server's PNG of the same frame, as mean absolute differences over
# all pixels and channels, in levels of 255: the JPEG sent (quality 85, 4:4:4) is ~1.9 off on the
# default UI, and the browser's decoder adds almost nothing to what simplejpeg decodes
PIXEL_TOLERANCE = 3.0
DECODER_TOLERANCE = 0.5
LOOK_TOLERANCE = 12.0  # a widget the page shows against its offscreen render (shows()), likewise
# A viewer that reads nothing while the app sends MEMORY_FRAMES_BYTES of frames to one that does (in
# at most MEMORY_MOST_S each): the app's RSS grows by less than MEMORY_SHARE of that. Queued frames
# would hold all of it (10 MiB for 12 MiB); the app grew 1.5 and 2.6 MiB for 12 MiB (lavapipe)
MEMORY_FRAMES_BYTES = 16 * 2**20
MEMORY_WARM_BYTES = 3 * 2**20  # first, while the non-reader's buffers fill and training warms up
MEMORY_MOST_S = 30.0
MEMORY_SHARE = 0.4
FORMULA = "sin(3*x)*y"
AWAY = (250, 545)  # a point of the page over plain text (the Training panel's figures), for no hover

# The page keeps a copy of each of the last KEPT frames it drew (window.__kept), so that the frame an
# F12 screenshot saved can be found among those it showed (the one before F12 where the screenshot's
# frame was unchanged, and not sent again), and counts the bytes of the frames it decoded.
KEEP_FRAMES_SCRIPT = """
(() => {
  const KEPT = 4, draw = CanvasRenderingContext2D.prototype.drawImage, decode = window.createImageBitmap;
  window.__kept = [];
  window.__frameBytes = 0;  // of the frames the page decoded
  window.createImageBitmap = (blob, ...rest) => { window.__frameBytes += blob.size || 0; return decode(blob, ...rest); };
  CanvasRenderingContext2D.prototype.drawImage = function (...args) {
    draw.apply(this, args);
    if (this.canvas.id !== "screen") return;
    const copy = document.createElement("canvas");
    copy.width = this.canvas.width; copy.height = this.canvas.height;
    draw.call(copy.getContext("2d"), this.canvas, 0, 0);
    window.__kept.push(copy);
    if (window.__kept.length > KEPT) window.__kept.shift();
  };
})();
"""


# The app gets SIGTERM (it ends as on Ctrl+C) when the test process dies: a crashed xdist worker left
# its app running, paused, for good. PR_SET_PDEATHSIG (1) is set, then the app started in its place.
ENDS_WITH_PARENT = (
    "import ctypes, os, signal, sys; ctypes.CDLL(None).prctl(1, signal.SIGTERM); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


class Served:
    """`python -m app --serve 0 --fresh --no-vsync` with a cache folder of its own; its URL is read
    when first asked for, so that the browser and this process's device start meanwhile."""

    def __init__(self, folder: Path):
        env = dict(os.environ, XDG_CACHE_HOME=str(folder / "cache"))
        env.pop("DISPLAY", None)  # no display: --serve needs none
        self.cache, self.stderr = folder / "cache", folder / "stderr.txt"
        with open(self.stderr, "w") as errors:
            self.process = subprocess.Popen(
                [sys.executable, "-c", ENDS_WITH_PARENT, "-m", "app", "--serve", "0", "--fresh", "--no-vsync"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
        self._url = ""

    @property
    def url(self) -> str:
        if not self._url:
            ready, _, _ = select.select([self.process.stdout], [], [], START_S)
            line = self.process.stdout.readline().strip() if ready else ""
            assert line.startswith("serving: http://127.0.0.1:"), (line, self.stderr.read_text())
            self._url = line.split(" ", 1)[1]
        return self._url

    @property
    def port(self) -> int:
        return int(self.url.split(":")[2].split("/")[0])

    @property
    def token(self) -> str:
        return self.url.split("token=", 1)[1]

    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def end(self) -> str:
        """SIGINT, as Ctrl+C: what it said on stderr."""
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        return self.stderr.read_text()


# The app, the browser, the page and the layout are the module's: they end with its last test, so
# no app and browser stay beside the worker's later tests. (xdist gives a worker a module's tests
# one after another; one given others' between two of them would start these again.)
@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The app; SIGINT at the end must exit 0 and keep the session, with no traceback."""
    served = Served(tmp_path_factory.mktemp("served"))
    try:
        yield served
    finally:
        said = served.end()
    assert served.process.returncode == 0, said
    assert "autosaved" in said and "Traceback" not in said and "never retrieved" not in said, said


@pytest.fixture(scope="module")
def browser(served):  # after `served`: Chromium starts while the app does
    assert Path(CHROMIUM).exists(), f"no {CHROMIUM}: bash scripts/setup.sh installs Debian's chromium"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM)
        yield chromium
        chromium.close()


class Layout:
    """Where the UI's widgets are at 1280x800, and how they look: the same frame() drawn offscreen in
    this process (the layout is the same for the same size and config), File's menu and its path
    fields opened too, and the learning-rate slider after DRAG (the rate it sets there)."""

    PROMPTS = ("save", "network", "csv")  # File's actions the tests take, each with its path field

    def __init__(self, gpu):
        from app.config.config import Config, validate
        from app.loop.session import Session
        from app.ui.offscreen import OffscreenApp

        self.ui = ui = OffscreenApp(
            Session(gpu, validate(Config()), grid=64, heatmaps=True), SIZE["width"], SIZE["height"]
        )
        try:
            ui.app.running = False
            ui.frame(3, force=True)
            self.rects = {name: tuple(round(v) for v in rect) for name, rect in ui.app.rects.items()}
            self.looks: dict[str, np.ndarray] = {}
            self._keep("pause", "pause paused")
            ui.app.running = True
            ui.frame(2, force=True)  # drawn: a software driver's window draws while training at a rate of its own
            self._keep("pause", "pause running")
            ui.app.running = False
            ui.frame(force=True)
            self._file_menu_and_path_fields()
            self.dragged_lr = self._drag_learning_rate()
        finally:
            ui.close()

    def _file_menu_and_path_fields(self) -> None:
        ui = self.ui
        ui.click(*centre(self.rects["menu file"]))
        for item in self.PROMPTS:
            self._keep(f"file {item}")
        ui.press(imgui.Key.escape)

        class Remote:  # as app/serve/remote_files.py's: the path field, an upload button for opening
            uploads = ("csv", "image", "shape", "load")

        ui.app.remote = Remote()
        for action in self.PROMPTS:
            ui.app.files.request(action)
            ui.frame(3, force=True)
            for name in ("path ok", "path upload"):
                if name in ui.app.rects:
                    self._keep(name, f"{action} {name}")
            ui.app.files.prompt = None
            ui.app.rects.pop("path upload", None)
            ui.frame(2)
        ui.app.remote = None

    def drag(self) -> tuple[int, int, int]:
        """The learning-rate slider's drag: y, and x from its middle to 80% of it."""
        x0, y0, x1, y1 = self.rects["learning rate"]
        return round((y0 + y1) / 2), round(x0 + 0.5 * (x1 - x0)), round(x0 + 0.8 * (x1 - x0))

    def _drag_learning_rate(self) -> float:
        ui = self.ui
        y, start, end = self.drag()
        ui.move(start, y)
        ui.renderer.make_current()
        imgui.get_io().add_mouse_button_event(0, True)
        ui.frame()
        ui.move(end, y)
        ui.renderer.make_current()
        imgui.get_io().add_mouse_button_event(0, False)
        ui.frame(2, force=True)
        self._keep("learning rate", "learning rate dragged")
        return ui.session.config.lr

    def _keep(self, name: str, key: str = "") -> None:
        x0, y0, x1, y1 = (round(v) for v in self.ui.app.rects[name])
        self.rects[key or name] = (x0, y0, x1, y1)
        self.looks[key or name] = self.ui.target.to_numpy()[y0:y1, x0:x1, :3].astype(np.float32)

    def centre(self, name: str) -> tuple[float, float]:
        return centre(self.rects[name])


def centre(rect) -> tuple[float, float]:
    x0, y0, x1, y1 = rect
    return round((x0 + x1) / 2), round((y0 + y1) / 2)


def open_page(browser, served: Served) -> Page:
    context = browser.new_context(viewport=SIZE, device_scale_factor=1, accept_downloads=True)
    context.add_init_script(KEEP_FRAMES_SCRIPT)
    page = context.new_page()
    page.goto(served.url)
    page.wait_for_function("() => window.__framesShown >= 1", timeout=WAIT_MS)
    return page


@pytest.fixture(scope="module")
def page(served, browser, gpu):
    """The first viewer: it controls. (`gpu`: this process's device starts while the app compiles.)"""
    page = open_page(browser, served)
    assert page.text_content("#status").startswith("in control")
    page.keyboard.press("Space")  # paused, but where a test trains: the CPU goes to what it waits for
    yield page
    page.context.close()


@pytest.fixture(scope="module")
def layout(page, gpu):  # after the app's first frame: its kernels are in the caches this process reads
    return Layout(gpu)


# ---- driving the page -----------------------------------------------------------------------------
def click(page: Page, layout: Layout, name: str) -> None:
    page.mouse.click(*layout.centre(name))


def shows(page: Page, layout: Layout, name: str, shown: bool = True) -> None:
    """Waits until the page shows widget `name` as the offscreen render does (a menu item, a
    button of the path field), or with `shown` False, until it does not: input sent before a
    widget is drawn reaches what was there, and a modal window blocks the frame it closes in."""
    deadline, error = time.monotonic() + WAIT_MS / 1000, None
    while time.monotonic() < deadline:
        error = float(np.abs(look(page, layout, name) - layout.looks[name]).mean())
        if (error < LOOK_TOLERANCE) == shown:
            return
        time.sleep(0.05)
    raise AssertionError(
        f"the page {'does not show' if shown else 'still shows'} {name!r} (mean difference {error:.1f})"
    )


def open_path_field(page: Page, layout: Layout, action: str) -> None:
    """File > the action's item; returns once its path field shows."""
    click(page, layout, "menu file")
    shows(page, layout, f"file {action}")
    click(page, layout, f"file {action}")
    shows(page, layout, f"{action} path ok")


def saved_file(page: Page, layout: Layout, action: str) -> bytes:
    """File > `action`'s item (a key of app/ui/files.py's ACTIONS that saves), then its button on
    the path field's default path (in the app's cache folder): the file the page downloads."""
    open_path_field(page, layout, action)
    with page.expect_download(timeout=WAIT_MS) as download:
        click(page, layout, f"{action} path ok")
    # the field closes a frame after: a click sent before that frame met the closing field (under
    # CI's load, a formula typed next went nowhere)
    shows(page, layout, f"{action} path ok", shown=False)
    return Path(download.value.path()).read_bytes()


def saved_checkpoint(page: Page, layout: Layout) -> checkpoint.Checkpoint:
    return checkpoint.decode(saved_file(page, layout, "save"))


def look(page: Page, layout: Layout, name: str) -> np.ndarray:
    x0, y0, x1, y1 = layout.rects[name]
    data = page.evaluate("([x, y, w, h]) => Array.from(ctx.getImageData(x, y, w, h).data)", [x0, y0, x1 - x0, y1 - y0])
    return np.array(data, np.float32).reshape(y1 - y0, x1 - x0, 4)[..., :3]


def trains(page: Page, layout: Layout) -> bool:
    """Whether the page shows the app training: its Pause button (Play while paused), the pointer
    away from it."""
    page.mouse.move(*AWAY)
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        shown = look(page, layout, "pause")
        errors = {
            state: float(np.abs(shown - layout.looks[f"pause {state}"]).mean()) for state in ("running", "paused")
        }
        if min(errors.values()) < LOOK_TOLERANCE:
            return errors["running"] < errors["paused"]
        time.sleep(0.05)
    raise AssertionError(f"the page shows neither Pause nor Play: {errors}")


def set_training(page: Page, layout: Layout, running: bool) -> None:
    """Space (play / pause) where training does not run or stand as asked; returns once it shows."""
    if trains(page, layout) != running:
        page.keyboard.press("Space")
        until_training(page, layout, running)


def until_training(page: Page, layout: Layout, running: bool) -> None:
    deadline = time.monotonic() + WAIT_MS / 1000
    while trains(page, layout) != running:
        assert time.monotonic() < deadline, f"the page does not show training {'running' if running else 'paused'}"
        time.sleep(0.05)


def png_pixels(data: bytes, folder: Path, name: str) -> np.ndarray:
    path = folder / name
    path.write_bytes(data)
    return np.array(spy.Bitmap(str(path)), copy=True)[..., :3].astype(np.float32)


# ---- the tests ------------------------------------------------------------------------------------
def test_a_click_on_pause_pauses_training(page, layout):
    """The step, from checkpoints saved (and downloaded) a second and a half apart, stops."""
    set_training(page, layout, True)
    click(page, layout, "pause")
    first = saved_checkpoint(page, layout)
    time.sleep(1.5)
    assert saved_checkpoint(page, layout).step == first.step > 0, "no step after Pause"
    assert not trains(page, layout)


def test_the_page_shows_the_servers_frame(page, layout, tmp_path):
    """F12 in the page: the server saves the frame it drew and the page downloads the PNG; one of
    the frames the page drew is that frame, within JPEG's error."""
    set_training(page, layout, False)  # the screenshot and the frames around it differ in no step
    with page.expect_download(timeout=WAIT_MS) as download:
        page.keyboard.press("F12")
    assert download.value.suggested_filename.endswith(".png")
    server = png_pixels(Path(download.value.path()).read_bytes(), tmp_path, "server.png")
    assert server.shape == (SIZE["height"], SIZE["width"], 3) and server.std() > 10, "the UI, drawn"
    rgba = np.dstack([server, np.full(server.shape[:2], 255.0)]).astype(np.uint8)
    jpeg = simplejpeg.encode_jpeg(rgba, quality=QUALITY, colorspace="RGBA", colorsubsampling="444")
    as_sent = simplejpeg.decode_jpeg(jpeg, colorspace="RGB").astype(np.float32)
    shown = page.evaluate("() => window.__kept.map((c) => c.toDataURL())")
    errors = []
    for k, url in enumerate(shown):
        pixels = png_pixels(base64.b64decode(url.split(",", 1)[1]), tmp_path, f"page{k}.png")
        assert pixels.shape == server.shape
        errors.append((float(np.abs(pixels - as_sent).mean()), float(np.abs(pixels - server).mean())))
    best = min(errors)
    assert best[0] < DECODER_TOLERANCE and best[1] < PIXEL_TOLERANCE, errors


def test_dragging_the_learning_rate_slider_sets_the_rate_it_shows(page, layout):
    """The slider dragged from its middle to 80% in the page: it shows what the same drag shows
    offscreen, and the config (a checkpoint's) has the rate that drag sets there."""
    y, start, end = layout.drag()
    page.mouse.move(start, y)
    page.mouse.down()
    page.mouse.move(end, y, steps=4)
    page.mouse.up()
    assert layout.dragged_lr > 0.01, "dragged right: a higher rate"
    shows(page, layout, "learning rate dragged")
    assert saved_checkpoint(page, layout).config.lr == layout.dragged_lr


def network_when(page: Page, layout: Layout, done) -> tuple[bytes, dict]:
    """network.json downloaded again until `done(network)`: a change that rebuilds the network
    (its kernels compile meanwhile) shows in it once the new network is in."""
    deadline = time.monotonic() + REBUILD_S
    while not done(network := json.loads(data := saved_file(page, layout, "network"))):
        assert time.monotonic() < deadline, f"not after {REBUILD_S} s: {network['targets']}, {network.get('data')}"
        time.sleep(0.5)
    return data, network


def test_a_formula_typed_into_a_target_field_retrains_on_it(page, layout):
    """Enter in f1's field rebuilds the network for the new formula, which then trains on it."""
    set_training(page, layout, False)  # while the rebuild compiles
    targets = json.loads(saved_file(page, layout, "network"))["targets"]
    assert targets[0] != FORMULA
    click(page, layout, "target f1")
    page.keyboard.press("Control+A")
    page.keyboard.type(FORMULA)
    page.keyboard.press("Enter")
    _, rebuilt = network_when(page, layout, lambda network: network["targets"][0] == FORMULA)
    assert rebuilt["targets"] == [FORMULA, *targets[1:]]
    set_training(page, layout, True)
    _, trained = network_when(page, layout, lambda network: network["layers"] != rebuilt["layers"])
    set_training(page, layout, False)
    assert trained["targets"] == rebuilt["targets"]


def test_an_uploaded_csv_trains_and_network_json_downloads_byte_for_byte(page, layout, served, tmp_path):
    """File > Load CSV of points, its upload button, the browser's file chooser: the points
    rebuild the network, which trains on them; the network.json downloaded is the server's."""
    rng = np.random.default_rng(1)
    points = rng.uniform(-1, 1, (400, 2))
    rows = [f"{x:.5f},{y:.5f},{'inside' if x * x + y * y < 0.5 else 'outside'}" for x, y in points]
    csv = tmp_path / "ring points.csv"
    csv.write_text("x,y,label\n" + "\n".join(rows) + "\n")
    set_training(page, layout, False)  # while the rebuild compiles
    open_path_field(page, layout, "csv")
    with page.expect_file_chooser(timeout=WAIT_MS) as chooser:
        click(page, layout, "csv path upload")
    with page.expect_response(lambda response: "/upload?" in response.url, timeout=WAIT_MS) as uploaded:
        chooser.value.set_files(str(csv))
    assert uploaded.value.ok
    shows(page, layout, "csv path ok", shown=False)  # the upload closed the path field
    _, network = network_when(page, layout, lambda network: "data" in network)
    source = network["data"]["source"]
    assert source["sha256"] == hashlib.sha256(csv.read_bytes()).hexdigest() and source["rows"] == 400, source
    assert network["data"]["classes"] == ["inside", "outside"]
    set_training(page, layout, True)
    data, network = network_when(page, layout, lambda network: network["data"]["epochs"] > 0)
    set_training(page, layout, False)
    kept = sorted(
        (served.cache / "slang-visual-trainer" / "exports").glob("network_*/network.json"), key=os.path.getmtime
    )
    assert kept and kept[-1].read_bytes() == data, "the download is the server's file, byte for byte"


DROP_SCRIPT = """([kind, name, text]) => {
  const data = new DataTransfer();
  data.items.add(new File([text], name, { type: "text/csv" }));
  document.querySelector("canvas").dispatchEvent(new DragEvent(kind, { dataTransfer: data, bubbles: true, cancelable: true }));
}"""


def test_a_csv_dropped_on_the_page_loads_as_one_dropped_on_the_window(page, layout):
    """A file dropped on the page uploads, and the app opens it by its kind (app/ui/dropped_files.py):
    a CSV of points, while no shape trains, rebuilds the network on them."""
    rng = np.random.default_rng(2)
    rows = [f"{x:.5f},{y:.5f},{x * y:.5f}" for x, y in rng.uniform(-1, 1, (300, 2))]
    text = "x,y,f\n" + "\n".join(rows) + "\n"
    set_training(page, layout, False)  # while the rebuild compiles
    page.evaluate(DROP_SCRIPT, ["dragenter", "dropped points.csv", text])
    hint = page.locator("#drop")
    assert hint.is_visible() and "a mesh (.obj .ply .stl .off)" in hint.inner_text(), "what a drop opens, said"
    with page.expect_response(lambda response: "/upload?action=drop" in response.url, timeout=WAIT_MS) as uploaded:
        page.evaluate(DROP_SCRIPT, ["drop", "dropped points.csv", text])
    assert uploaded.value.ok and not hint.is_visible()
    _, network = network_when(
        page, layout, lambda network: "data" in network and network["data"]["source"]["rows"] == 300
    )
    assert network["data"]["source"]["sha256"] == hashlib.sha256(text.encode()).hexdigest()


def request(served: Served, method: str, path: str, token: str | None, origin: str | None) -> int:
    """The HTTP status of one request; /ws asks for a WebSocket upgrade."""
    query = "" if token is None else ("&" if "?" in path else "?") + f"token={token}"
    headers = {"Host": f"127.0.0.1:{served.port}"}
    if origin is not None:
        headers["Origin"] = origin
    if path.startswith("/ws"):
        headers.update(
            {
                "Upgrade": "websocket",
                "Connection": "Upgrade",
                "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode(),
                "Sec-WebSocket-Version": "13",
            }
        )
    connection = http.client.HTTPConnection("127.0.0.1", served.port, timeout=20)
    try:
        connection.request(method, path + query, body=b"x,y\n" if method == "POST" else None, headers=headers)
        return connection.getresponse().status
    finally:
        connection.close()


ROUTES = [
    ("GET", "/"),
    ("GET", "/ws"),
    ("POST", "/upload?action=csv&viewer=1&name=a.csv"),
    ("GET", "/download/k/a.png"),
]


def test_no_token_a_wrong_token_and_a_foreign_origin_are_refused(served, page):  # page: the app is up
    """Each route, with no token, a wrong one, or the right one from another site's page: 403."""
    own, foreign, wrong = served.origin(), "http://example.com", served.token[:-4] + "AAAA"
    assert request(served, "GET", "/", served.token, None) == 200
    assert request(served, "GET", "/ws", served.token, own) == 101
    refused = {
        (method, path.split("?")[0], case): request(served, method, path, token, origin)
        for method, path in ROUTES
        for case, token, origin in (
            ("no token", None, own),
            ("wrong token", wrong, own),
            ("foreign", served.token, foreign),
        )
    }
    assert set(refused.values()) == {403}, refused


def test_with_two_viewers_one_controls(page, layout, browser, served):
    """Space from the viewer that watches does nothing, from the one in control it plays or pauses:
    each time the watcher's goes first, then the controller's, whose effect alone must show."""
    set_training(page, layout, False)
    other = open_page(browser, served)
    try:
        assert other.text_content("#status").startswith("watching")
        other.keyboard.press("Space")
        page.keyboard.press("Space")
        until_training(page, layout, True)
        time.sleep(0.5)
        assert trains(page, layout) and trains(other, layout), "the watcher's Space did nothing"
        other.click("#take")
        other.wait_for_function("() => document.getElementById('status').textContent.startsWith('in control')")
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('watching')")
        page.keyboard.press("Space")
        other.keyboard.press("Space")
        until_training(other, layout, False)
        time.sleep(0.5)
        assert not trains(other, layout) and not trains(page, layout), (
            "the first page's Space, now watching, did nothing"
        )
    finally:
        page.click("#take")
        page.wait_for_function("() => document.getElementById('status').textContent.startsWith('in control')")
        other.context.close()


def frames_sent(page: Page, least: int) -> int:
    """Waits until the page has decoded at least `least` bytes of frames more; how many it did."""
    before, deadline = page.evaluate("() => window.__frameBytes"), time.monotonic() + MEMORY_MOST_S
    while (sent := page.evaluate("() => window.__frameBytes") - before) < least:
        assert time.monotonic() < deadline, f"only {sent / 2**20:.1f} MiB of frames in {MEMORY_MOST_S} s"
        time.sleep(0.25)
    return sent


def vm_rss(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def test_a_viewer_that_reads_nothing_leaves_memory_flat(page, layout, served):
    """A WebSocket that never reads (a small receive buffer: the server's writes back up at once)
    while the app trains: the server's memory grows by far less than the frames it sent meanwhile,
    which it would hold for that viewer were they queued."""
    set_training(page, layout, True)
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
    raw.connect(("127.0.0.1", served.port))
    key = base64.b64encode(os.urandom(16)).decode()
    raw.sendall(
        f"GET /ws?token={served.token} HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    try:
        assert raw.recv(12) == b"HTTP/1.1 101"
        frames_sent(page, MEMORY_WARM_BYTES)  # the socket's buffers fill, training's own allocations are made
        before = vm_rss(served.process.pid)
        sent = frames_sent(page, MEMORY_FRAMES_BYTES)
        grown = vm_rss(served.process.pid) - before
        assert grown < sent * MEMORY_SHARE, f"{grown / 2**20:.1f} MiB for {sent / 2**20:.1f} MiB of frames sent"
    finally:
        raw.close()
        set_training(page, layout, False)
