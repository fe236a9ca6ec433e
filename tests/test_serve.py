"""--serve without a browser: the address and token, the server's routes (aiohttp's client for HTTP
and the WebSocket), the hub, the frame encoder, the page's input into ImGui, the command line, and
one served app driven by a scripted viewer. The real-browser tests are tests/test_serve_browser.py."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import queue
import shutil
import socket
import ssl
import subprocess
import threading
import time
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import aiohttp  # the serve extra, which the tests' set-up installs: a broken install fails here
import numpy as np
import pytest
import simplejpeg
from helpers import run_app, run_coroutine
from imgui_bundle import imgui
from yarl import URL

from app.errors import UserError
from app.gpu.gpu import create_gpu
from app.serve import remote_input, served_window
from app.serve import server as server_module
from app.serve.address import ServeAddress, parse_address, read_token, serve_address, tls_context
from app.serve.downloads import Downloads
from app.serve.frame_encoder import FrameEncoder
from app.serve.hub import MAX_MESSAGES, Hub
from app.serve.server import Server, safe_name
from app.ui.style import px

TOKEN = "t0ken-of-the-tests_" + "a1B2c3D4e5F6g7H8"
WAIT_S = 20  # any one exchange with the server; a test that needs longer has hung


# ---- the address, the token, TLS -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8080", ("127.0.0.1", 8080)),
        ("0", ("127.0.0.1", 0)),
        (" 9000 ", ("127.0.0.1", 9000)),
        ("0.0.0.0:9000", ("0.0.0.0", 9000)),
        ("localhost:65535", ("localhost", 65535)),
        ("[::1]:8080", ("::1", 8080)),
        ("[::]:1", ("::", 1)),
        (":8080", ("127.0.0.1", 8080)),
    ],
)
def test_addresses_parse(text, expected):
    assert parse_address(text) == expected


@pytest.mark.parametrize("text", ["", "http", "65536", "-1", "80x", "host:", "[::1]", "1e3", "８０", "²", "host:99999"])
def test_a_bad_address_is_one_line_naming_the_form(text):
    with pytest.raises(UserError) as caught:
        parse_address(text)
    message = str(caught.value)
    assert "\n" not in message and "[HOST:]PORT" in message and repr(text) in message


def test_the_printed_token_has_at_least_128_random_bits():
    tokens = {serve_address("0", None, None, None).token for _ in range(4)}
    assert len(tokens) == 4, "a fresh token each start"
    for token in tokens:
        assert set(token) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
        assert len(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))) * 8 >= 128


def test_a_token_file_gives_its_first_line(tmp_path):
    path = tmp_path / "token"
    path.write_text(f"  {TOKEN}  \nthe rest is ignored\n")
    assert read_token(str(path)) == TOKEN
    assert serve_address("0", str(path), None, None).token == TOKEN


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"short-token\n", "at least 22 characters"),
        (b"", "at least 22 characters"),
        (b"a token with spaces in it, long enough\n", "at least 22 characters"),
        (b"\xff\xfe\x00binary\x89PNG" * 8, "is not text"),
    ],
)
def test_a_bad_token_file_is_one_line(tmp_path, content, said):
    path = tmp_path / "token"
    path.write_bytes(content)
    with pytest.raises(UserError) as caught:
        read_token(str(path))
    assert said in str(caught.value) and "\n" not in str(caught.value)


def test_a_missing_token_file_is_one_line(tmp_path):
    with pytest.raises(UserError, match="cannot read --token-file .*No such file") as caught:
        read_token(str(tmp_path / "nowhere"))
    assert "\n" not in str(caught.value)


def test_certfile_and_keyfile_go_together(tmp_path):
    for certfile, keyfile in ((str(tmp_path / "c.pem"), None), (None, str(tmp_path / "k.pem"))):
        with pytest.raises(UserError, match="--certfile and --keyfile go together"):
            tls_context(certfile, keyfile)
    assert tls_context(None, None) is None


def test_a_bad_certificate_is_one_line(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text("-----BEGIN CERTIFICATE-----\nnot base64 at all\n-----END CERTIFICATE-----\n")
    key.write_text("nothing\n")
    for certfile in (cert, tmp_path / "missing.pem"):
        with pytest.raises(UserError, match="cannot use --certfile") as caught:
            tls_context(str(certfile), str(key))
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::", "example.org"])
def test_an_address_others_can_reach_warns_naming_the_ssh_tunnel(host):
    line = ServeAddress(host, 8123, TOKEN).warning()
    assert line is not None and "\n" not in line
    assert "SSH tunnel" in line and "ssh -L 8123:127.0.0.1:8123" in line and host in line


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_loopback_gives_no_warning(host):
    assert ServeAddress(host, 8123, TOKEN).warning() is None


def test_the_warning_names_the_port_the_system_chose():
    assert "ssh -L 40123:127.0.0.1:40123" in ServeAddress("0.0.0.0", 0, TOKEN).warning(40123)


# ---- a server in this process ----------------------------------------------------------------------
@contextlib.contextmanager
def serving(tmp_path: Path, tls: ssl.SSLContext | None = None):
    server = Server(Hub(), ServeAddress("127.0.0.1", 0, TOKEN, tls), Downloads(), tmp_path / "uploads")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def served(tmp_path):
    with serving(tmp_path) as server:
        yield server


def base(server: Server) -> str:
    return f"{'https' if server.address.tls else 'http'}://127.0.0.1:{server.port}"


def run(coroutine):
    return run_coroutine(asyncio.wait_for(coroutine, WAIT_S))


def request(method: str, url, data: bytes | None = None, ssl_context=None) -> tuple[int, bytes, dict]:
    async def go():
        async with aiohttp.ClientSession() as session:
            async with session.request(method, url, data=data, ssl=ssl_context) as response:
                return response.status, await response.read(), dict(response.headers)

    return run(go())


def with_token(path: str, token: str | None) -> str:
    if token is None:
        return path
    return f"{path}{'&' if '?' in path else '?'}token={token}"


async def received_json(socket, kind: str) -> dict:
    """The next text message of type `kind`, frames and other messages skipped."""
    while True:
        message = await socket.receive(timeout=WAIT_S)
        if message.type == aiohttp.WSMsgType.TEXT and json.loads(message.data).get("t") == kind:
            return json.loads(message.data)
        assert message.type in (aiohttp.WSMsgType.TEXT, aiohttp.WSMsgType.BINARY), message


WRONG_TOKENS = [None, "", "wrong", TOKEN[:-1], TOKEN + "x", TOKEN.upper(), TOKEN[:-1] + "Z"]


@pytest.mark.parametrize(
    "token", [*WRONG_TOKENS, TOKEN], ids=["none", "empty", "wrong", "short", "long", "upper", "last", "right"]
)
def test_every_route_needs_the_token(served, tmp_path, token):
    hub = served.hub
    hub.join()  # a viewer in control (number 1), whose upload the right token lets through
    offered = tmp_path / "network.json"
    offered.write_bytes(b'{"secret": 1}')
    download = served.downloads.offer(offered)
    right = token == TOKEN
    status, body, _ = request("GET", base(served) + with_token("/", token))
    assert status == (200 if right else 403) and (b"<canvas" in body) == right
    status, body, _ = request("GET", base(served) + with_token(download, token))
    assert status == (200 if right else 403) and (body == b'{"secret": 1}') == right
    status, _, _ = request("POST", base(served) + with_token("/upload?action=csv&viewer=1&name=a.csv", token), b"x,y\n")
    assert status == (200 if right else 403)
    assert hub.inputs.qsize() == (1 if right else 0), "an upload reaches the app only with the token"
    assert (tmp_path / "uploads").exists() == right
    status, _, _ = request("GET", base(served) + with_token("/ws", token))  # not an upgrade: 400 past the token
    assert status == (400 if right else 403)

    async def socket():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(base(served) + with_token("/ws", token)) as ws:
                return (await received_json(ws, "hello"))["viewer"]

    if right:
        assert run(socket()) == 2
    else:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            run(socket())
        assert refused.value.status == 403
        assert hub.viewer_count() == 1, "a refused socket never joins"


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        (None, True),  # no browser page: the token alone decides
        ("{own}", True),
        ("http://evil.example", False),
        ("http://127.0.0.1:1", False),
        ("https://{host}", False),  # the scheme is part of the origin
        ("null", False),  # a sandboxed frame or a file:// page
    ],
)
def test_the_socket_takes_only_its_own_origin(served, origin, allowed):
    host = f"127.0.0.1:{served.port}"
    headers = {} if origin is None else {"Origin": origin.format(own=f"http://{host}", host=host)}

    async def connect():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(base(served) + with_token("/ws", TOKEN), headers=headers) as ws:
                return await received_json(ws, "control")

    if allowed:
        assert run(connect()) == {"t": "control", "you": True, "viewers": 1}
    else:
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            run(connect())
        assert refused.value.status == 403
        assert served.hub.viewer_count() == 0


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("no openssl command to make a self-signed certificate with")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        + ["-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1"],
        check=True,
        capture_output=True,
    )
    return cert, key


def test_https_and_wss_with_a_certificate(tmp_path):
    cert, key = self_signed_certificate(tmp_path)
    trusting = ssl.create_default_context(cafile=str(cert))  # checks the name, 127.0.0.1, too
    with serving(tmp_path, tls_context(str(cert), str(key))) as server:
        assert server.url == f"https://127.0.0.1:{server.port}/?token={TOKEN}"
        status, body, headers = request("GET", server.url, ssl_context=trusting)
        assert status == 200 and b"<canvas" in body and headers["Referrer-Policy"] == "no-referrer"
        assert request("GET", base(server) + "/", ssl_context=trusting)[0] == 403
        with pytest.raises(aiohttp.ClientError):
            request("GET", f"http://127.0.0.1:{server.port}/?token={TOKEN}")  # no plain HTTP beside it

        async def connect(origin: str):
            async with aiohttp.ClientSession() as session:
                wss = f"wss://127.0.0.1:{server.port}/ws?token={TOKEN}"
                async with session.ws_connect(wss, ssl=trusting, headers={"Origin": origin}) as ws:
                    server.hub.publish(b"frame over TLS", 1, 1)
                    while True:
                        message = await ws.receive(timeout=WAIT_S)
                        if message.type == aiohttp.WSMsgType.BINARY:
                            return message.data

        assert run(connect(f"https://127.0.0.1:{server.port}")) == b"frame over TLS"
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            run(connect(f"http://127.0.0.1:{server.port}"))
        assert refused.value.status == 403


# ---- downloads -----------------------------------------------------------------------------------
def test_an_offered_file_downloads_byte_identical(served, tmp_path):
    data = np.random.default_rng(4).integers(0, 256, 300_000, dtype=np.uint8).tobytes()
    path = tmp_path / "out" / "ré sumé 1.ckpt"  # a space and non-ASCII: quoted in the URL
    path.parent.mkdir()
    path.write_bytes(data)
    url = served.downloads.offer(path)
    status, body, headers = request("GET", URL(base(served) + url).update_query(token=TOKEN))
    assert status == 200 and body == data
    assert (
        headers["Content-Disposition"].startswith("attachment; filename=") and "/" not in headers["Content-Disposition"]
    )


def test_downloads_reach_only_the_offered_file(served, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "offered.json").write_text("{}")
    (folder / "secret.txt").write_text("not for the browser")
    (tmp_path / "secret.txt").write_text("not for the browser")
    (folder / "other.json").write_text("[]")
    key = served.downloads.offer(folder / "offered.json").split("/")[2]
    other_key = served.downloads.offer(folder / "other.json").split("/")[2]
    refused = [
        f"/download/{key}/secret.txt",  # the offered key, a file beside it
        f"/download/{key}/other.json",  # the offered key, another offer's name
        f"/download/{other_key}/offered.json",
        f"/download/{key}/..%2Fsecret.txt",
        f"/download/{key}/..%2F..%2Fsecret.txt",
        f"/download/{key}/%2E%2E",
        f"/download/{key}/offered.json%2F..%2Fsecret.txt",
        "/download/not-a-key/offered.json",
        f"/download/{key[:-1]}/offered.json",
        "/download/..%2F..%2Fout/secret.txt",
        f"/download/{key}/",
        f"/download/{key}/Offered.json",
    ]
    for path in refused:
        status, body, _ = request("GET", URL(f"{base(served)}{path}?token={TOKEN}", encoded=True))
        assert status == 404 and b"not for the browser" not in body, path
    for offered in (f"{key}/offered.json", f"{other_key}/other.json"):
        assert request("GET", URL(f"{base(served)}/download/{offered}?token={TOKEN}", encoded=True))[0] == 200
    assert served.downloads.find(key, "../secret.txt") is None
    (folder / "offered.json").unlink()
    assert request("GET", URL(f"{base(served)}/download/{key}/offered.json?token={TOKEN}", encoded=True))[0] == 404


# ---- uploads -------------------------------------------------------------------------------------
def upload(server: Server, query: str, data: bytes) -> tuple[int, dict]:
    status, body, _ = request("POST", f"{base(server)}/upload?token={TOKEN}&{query}", data)
    return status, json.loads(body) if body.startswith(b"{") else {}


def test_an_upload_lands_under_the_uploads_folder_and_reaches_the_frame_loop(served, tmp_path):
    served.hub.join()
    data = b"x,y,label\n0.5,0.25,1\n"
    status, body = upload(served, "action=csv&viewer=1&name=..%2F..%2Fpoints.csv", data)
    assert status == 200 and body == {"ok": True, "bytes": len(data)}
    viewer, event = served.hub.inputs.get_nowait()
    assert viewer == 1 and event["t"] == "upload" and event["action"] == "csv"
    path = Path(event["path"])
    assert path.resolve().is_relative_to((tmp_path / "uploads").resolve()) and path.name == "points.csv"
    assert path.read_bytes() == data
    assert upload(served, "action=csv&viewer=1&name=points.csv", b"other")[0] == 200
    _, again = served.hub.inputs.get_nowait()
    assert Path(again["path"]) != path and path.read_bytes() == data, "an upload never replaces another"


@pytest.mark.parametrize(
    ("query", "status"),
    [
        ("action=csv&viewer=2&name=a.csv", 409),  # a watcher
        ("action=csv&name=a.csv", 409),
        ("action=csv&viewer=one&name=a.csv", 409),
        ("action=run&viewer=1&name=a.csv", 400),
        ("action=&viewer=1&name=a.csv", 400),
        ("action=..%2Fload&viewer=1", 400),
    ],
)
def test_uploads_only_from_the_viewer_in_control_for_an_open_action(served, tmp_path, query, status):
    served.hub.join()
    served.hub.join()
    got, body = upload(served, query, b"x,y\n1,2\n")
    assert got == status and "error" in body
    assert served.hub.inputs.empty() and not (tmp_path / "uploads").exists()


def test_an_upload_over_the_limit_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(server_module, "UPLOAD_LIMIT", 1000)
    with serving(tmp_path) as server:
        server.hub.join()
        assert upload(server, "action=image&viewer=1&name=a.png", b"\x89" * 900)[0] == 200
        server.hub.inputs.get_nowait()
        status, body = upload(server, "action=image&viewer=1&name=b.png", b"\x89" * 5000)
        assert status == 413 and "limited to" in body["error"]
        assert server.hub.inputs.empty()
        assert [path.name for path in (tmp_path / "uploads").rglob("*.png")] == ["a.png"]


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("points.csv", "points.csv"),
        ("../x", "x"),
        ("../../etc/passwd", "passwd"),
        ("..\\..\\boot.ini", "boot.ini"),
        (".hidden", "hidden"),
        ("..", "upload"),
        ("", "upload"),
        ("/", "upload"),
        ("données.csv", "donn_es.csv"),
        ("日本語.png", "___.png"),
        ("a b;rm -rf.svg", "a_b_rm_-rf.svg"),
    ],
)
def test_safe_names(name, safe):
    assert safe_name(name) == safe


def test_a_long_name_is_cut_keeping_its_suffix():
    name = safe_name("a" * 1000 + ".svg")  # a shape's kind follows its suffix (app/truth/sdf_truth.py)
    assert len(name) <= 120 and name.endswith("a.svg")


# ---- the hub -------------------------------------------------------------------------------------
def test_the_hub_keeps_the_newest_frame_only():
    hub = Hub()
    hub.join()
    for number in range(100):
        hub.publish(bytes([number]) * 10, 4, 2)
    newest = hub.newest()
    assert newest.number == 100 and newest.data == bytes([99]) * 10 and (newest.width, newest.height) == (4, 2)


def _raw_socket_that_reads_nothing(port: int) -> socket.socket:
    """A WebSocket opened by hand, whose frames are never read (a small receive buffer, so that the
    server's writes back up soon)."""
    raw = socket.socket()
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)
    raw.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    raw.sendall(
        f"GET /ws?token={TOKEN} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    assert raw.recv(12) == b"HTTP/1.1 101"
    return raw


def test_a_viewer_that_reads_nothing_leaves_memory_flat(served):
    hub, frame_bytes = served.hub, 1 << 20
    raw = _raw_socket_that_reads_nothing(served.port)
    try:
        deadline = time.monotonic() + WAIT_S
        while hub.viewer_count() < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        blob = os.urandom(frame_bytes)
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            for number in range(100):  # 100 MB of frames, each a new object
                hub.publish(number.to_bytes(4, "little") + blob[4:], 640, 400)
                time.sleep(0.002)
            time.sleep(0.3)
            grown = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert grown < 6 * frame_bytes, f"{grown / 2**20:.1f} MiB held for a viewer that reads nothing"
        assert hub.bytes_sent < 40 * frame_bytes, "frames were skipped, not all written"
    finally:
        raw.close()


def test_control_passes_to_the_longest_watching_viewer():
    hub = Hub()
    first, second, third = hub.join(), hub.join(), hub.join()
    assert hub.controller == first.number
    hub.leave(first)
    assert hub.controller == second.number
    hub.take_control(third)
    assert hub.controller == third.number
    hub.leave(third)
    assert hub.controller == second.number
    fourth = hub.join()
    hub.leave(second)
    assert hub.controller == fourth.number
    hub.leave(fourth)
    assert hub.controller is None
    fifth = hub.join()
    assert hub.controller == fifth.number, "the first after all left takes control"


def test_a_viewer_that_left_cannot_take_control():
    hub = Hub()
    first, second = hub.join(), hub.join()
    hub.leave(second)
    hub.take_control(second)
    assert hub.controller == first.number


def test_each_viewer_hears_its_own_control_state_once():
    hub = Hub()
    first = hub.join()
    second = hub.join()
    hub.take_control(second)
    assert hub.take_messages(first) == [{"t": "control", "you": False, "viewers": 2}]
    assert hub.take_messages(second) == [{"t": "control", "you": True, "viewers": 2}]
    assert hub.take_messages(second) == []


def test_messages_for_a_viewer_that_reads_nothing_stay_few():
    hub = Hub()
    viewer = hub.join()
    for number in range(1000):
        hub.tell_controller({"t": "clipboard", "s": str(number)})
    messages = hub.take_messages(viewer)
    assert len(messages) <= MAX_MESSAGES + 1 and messages[-1] == {"t": "clipboard", "s": "999"}


def test_only_the_viewer_in_control_gives_input(served):
    hub = served.hub

    async def two_viewers():
        async with aiohttp.ClientSession() as session:
            url = base(served) + with_token("/ws", TOKEN)
            async with session.ws_connect(url) as first, session.ws_connect(url) as second:
                assert (await received_json(first, "hello"))["viewer"] == 1
                assert await received_json(second, "control") == {"t": "control", "you": False, "viewers": 2}
                hub.publish(b"both see it", 1, 1)
                for socket in (first, second):
                    while (message := await socket.receive(timeout=WAIT_S)).type != aiohttp.WSMsgType.BINARY:
                        pass
                    assert message.data == b"both see it"
                await second.send_json({"t": "key", "code": "KeyA", "down": True})
                await second.send_json({"t": "size", "w": 900, "h": 700, "dpr": 2})
                await second.send_json({"t": "take"})
                while not (await received_json(second, "control"))["you"]:
                    pass
                size_while_second_led = hub.controller_size()  # the size it sent as a watcher
                await second.send_json({"t": "move", "x": 1, "y": 2})
                await first.send_json({"t": "key", "code": "KeyB", "down": True})  # now the watcher's
                await first.send_json({"t": "take"})
                while not (await received_json(first, "control"))["you"]:
                    pass
            return size_while_second_led

    assert run(two_viewers()) == (900, 700, 2.0)
    events = []
    while not hub.inputs.empty():
        events.append(hub.inputs.get_nowait())
    assert events == [(2, {"t": "move", "x": 1, "y": 2})], "a watcher's key, size and take are no input"
    deadline = time.monotonic() + WAIT_S
    while hub.viewer_count() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert hub.controller is None and hub.viewer_count() == 0


def inputs_until(hub: Hub, kind: str) -> list:
    """hub.inputs' events up to and with the first of type `kind` (a socket's events arrive in order)."""
    events = []
    while not events or events[-1].get("t") != kind:
        events.append(hub.inputs.get(timeout=WAIT_S)[1])
    return events


def test_malformed_socket_messages_reach_nothing(served):
    hub = served.hub

    async def send_all():
        async with aiohttp.ClientSession() as session:
            async with session.ws_connect(base(served) + with_token("/ws", TOKEN)) as ws:
                await received_json(ws, "control")
                await ws.send_json({"t": "size", "w": 800, "h": 600, "dpr": 1})
                for text in (
                    "not json",
                    "[1, 2]",
                    '"text"',
                    '{"t": "size", "w": 800, "h": 600, "dpr": NaN}',  # JSON as Python reads it
                    '{"t": "size", "w": Infinity, "h": 600}',
                    '{"t": "size", "w": 1e400, "h": 600}',
                    '{"t": "size", "w": "wide", "h": 600}',
                    '{"t": "size", "w": 800, "h": 600, "dpr": -Infinity}',
                    '{"t": "upload"}',  # only /upload makes these, once the file is kept
                    '{"t": "upload", "action": "load", "path": "/etc/passwd"}',
                    "[" * 100_000,  # deeper than json's recursion
                ):
                    await ws.send_str(text)
                await ws.send_json({"t": "move", "x": 5, "y": 6})
                events = await asyncio.get_running_loop().run_in_executor(None, inputs_until, hub, "move")
                return events, hub.controller_size()

    events, size = run(send_all())
    kinds = [event.get("t") for event in events]
    assert "upload" not in kinds and kinds[-1] == "move"
    assert size == (800, 600, 1.0), "a size of NaN or infinity keeps the last good one"


# ---- the frame encoder ---------------------------------------------------------------------------
def until(done, seconds: float = WAIT_S) -> bool:
    deadline = time.monotonic() + seconds
    while not done() and time.monotonic() < deadline:
        time.sleep(0.002)
    return done()


def picture(width: int = 320, height: int = 200, shift: int = 0) -> np.ndarray:
    """RGBA: smooth gradients, a solid block and a line of text-like strokes."""
    y, x = np.mgrid[0:height, 0:width]
    pixels = np.empty((height, width, 4), np.uint8)
    pixels[..., 0] = (x * 255 // (width - 1) + shift) % 256
    pixels[..., 1] = y * 255 // (height - 1)
    pixels[..., 2] = 128
    pixels[..., 3] = 255
    pixels[40:80, 50:150, :3] = (30, 30, 30)
    pixels[100:104, 20:300:6, :3] = 250
    return pixels


@pytest.fixture
def encoded():
    hub = Hub()
    encoder = FrameEncoder(hub)
    yield hub, encoder
    encoder.stop()


def test_an_unchanged_frame_is_not_sent_again(encoded):
    hub, encoder = encoded
    encoder.submit(picture())
    assert until(lambda: hub.newest() is not None)
    encoder.submit(picture())  # equal pixels, another array
    assert until(lambda: encoder.unchanged == 1)
    assert hub.newest().number == 1 and encoder.encoded == 1
    encoder.resend()
    encoder.submit(picture())
    assert until(lambda: hub.newest().number == 2), "resend() sends the next frame, changed or not"
    encoder.submit(picture(shift=1))
    assert until(lambda: hub.newest().number == 3), "a changed frame is sent"
    encoder.submit(picture(160, 100))
    assert until(lambda: hub.newest().number == 4) and (hub.newest().width, hub.newest().height) == (160, 100)


def test_an_encoded_frame_decodes_close_to_its_pixels(encoded):
    hub, encoder = encoded
    pixels = picture()
    encoder.submit(pixels)
    assert until(lambda: hub.newest() is not None)
    decoded = simplejpeg.decode_jpeg(hub.newest().data, colorspace="RGB").astype(np.int16)
    assert decoded.shape == (200, 320, 3)
    error = np.abs(decoded - pixels[..., :3].astype(np.int16))
    other = np.abs(decoded - picture(shift=64)[..., :3].astype(np.int16))
    assert error.mean() < 2.0 and np.percentile(error, 99.9) < 40, (error.mean(), error.max())
    assert other.mean() > 10 * error.mean()


def test_only_the_newest_waiting_frame_is_encoded(encoded):
    hub, encoder = encoded
    frames = [picture(shift=shift) for shift in range(30)]
    with encoder._ready:  # the encoder's lock (reentrant): it takes none until all wait
        for pixels in frames:
            encoder.submit(pixels)
    assert until(lambda: hub.newest() is not None)
    time.sleep(0.05)
    decoded = simplejpeg.decode_jpeg(hub.newest().data, colorspace="RGB").astype(np.int16)
    assert np.abs(decoded - frames[-1][..., :3]).mean() < 2.0, "the last frame submitted is the one shown"
    assert encoder.encoded == 1 and hub.newest().number == 1, "frames that waited behind a newer one were dropped"


# ---- the page's input into ImGui -----------------------------------------------------------------
@pytest.fixture
def context():
    """An ImGui context of this test's, all of a frame's events taken in that frame."""
    previous = imgui.get_current_context()
    made = imgui.create_context()
    io = imgui.get_io()
    io.set_ini_filename("")  # no imgui.ini left in the working folder
    io.display_size = imgui.ImVec2(640, 400)
    io.backend_flags |= imgui.BackendFlags_.renderer_has_textures
    io.config_input_trickle_event_queue = False
    yield made
    imgui.destroy_context(made)
    if previous is not None:
        imgui.set_current_context(previous)


def page_app() -> SimpleNamespace:
    """What remote_input touches of the app: its redraw, F12's screenshot, Ctrl+Q's quit."""
    said = []
    return SimpleNamespace(
        redraw=SimpleNamespace(note_input=lambda: said.append("input")),
        request_screenshot=lambda: said.append("screenshot"),
        quit=False,
        said=said,
    )


@pytest.mark.parametrize(
    ("code", "key"),
    [
        ("KeyA", imgui.Key.a),
        ("KeyZ", imgui.Key.z),
        ("Digit1", imgui.Key._1),
        ("Digit0", imgui.Key._0),
        ("F1", imgui.Key.f1),
        ("F12", imgui.Key.f12),
        ("ArrowLeft", imgui.Key.left_arrow),
        ("ArrowDown", imgui.Key.down_arrow),
        ("Enter", imgui.Key.enter),
        ("NumpadEnter", imgui.Key.keypad_enter),
        ("Numpad7", imgui.Key.keypad7),
        ("Space", imgui.Key.space),
        ("Escape", imgui.Key.escape),
        ("Backspace", imgui.Key.backspace),
        ("Tab", imgui.Key.tab),
        ("Delete", imgui.Key.delete),
        ("Minus", imgui.Key.minus),
    ],
)
def test_key_codes_reach_imgui_as_their_keys(context, code, key):
    app = page_app()
    remote_input.apply(app, {"t": "key", "code": code, "down": True})
    imgui.new_frame()
    assert imgui.is_key_down(key)
    assert not imgui.is_key_down(imgui.Key.b if key != imgui.Key.b else imgui.Key.c)
    imgui.end_frame()
    remote_input.apply(app, {"t": "key", "code": code, "down": False})
    imgui.new_frame()
    assert not imgui.is_key_down(key)
    imgui.end_frame()
    assert "input" in app.said and ("screenshot" in app.said) == (code == "F12")


def test_modifiers_and_ctrl_q(context):
    app = page_app()
    remote_input.apply(app, {"t": "key", "code": "KeyA", "down": True, "ctrl": True, "shift": True, "alt": False})
    imgui.new_frame()
    io = imgui.get_io()
    assert io.key_ctrl and io.key_shift and not io.key_alt and imgui.is_key_down(imgui.Key.a)
    imgui.end_frame()
    assert not app.quit
    remote_input.apply(app, {"t": "key", "code": "KeyQ", "down": True, "ctrl": True})
    assert app.quit, "Ctrl+Q quits, as in the window"


@pytest.mark.parametrize("text", ["日本語", "Ελληνικά", "Привет", "مرحبا", "é ü ß", "🙂 x"])
def test_text_in_any_script_reaches_imgui(context, text):
    remote_input.apply(page_app(), {"t": "text", "s": text})
    imgui.new_frame()
    assert "".join(map(chr, imgui.get_io().input_queue_characters)) == text
    imgui.end_frame()


def test_a_paste_sets_the_clipboard_and_presses_ctrl_v(context):
    remote_input.apply(page_app(), {"t": "paste", "s": "Ελληνικά 1,2"})
    assert imgui.get_clipboard_text() == "Ελληνικά 1,2"
    assert context.input_events_queue.size() == 4  # Ctrl down, V down, V up, Ctrl up


def test_the_mouse_reaches_imgui(context):
    app = page_app()
    for event in (
        {"t": "move", "x": 120, "y": 33.5},
        {"t": "button", "b": 1, "down": True},
        {"t": "wheel", "dx": 0, "dy": -2},
    ):
        remote_input.apply(app, event)
    imgui.new_frame()
    io = imgui.get_io()
    assert (io.mouse_pos.x, io.mouse_pos.y) == (120, 33) and imgui.is_mouse_down(1) and io.mouse_wheel == -2
    imgui.end_frame()


MALFORMED = [
    {},
    {"t": None},
    {"t": ["move"]},
    {"t": "nothing"},
    {"t": "move"},
    {"t": "move", "x": float("nan"), "y": 1},
    {"t": "move", "x": 1, "y": float("inf")},
    {"t": "move", "x": "12", "y": "13"},
    {"t": "move", "x": True, "y": 1},
    {"t": "move", "x": [1], "y": {"a": 1}},
    {"t": "button"},
    {"t": "button", "b": 5, "down": True},
    {"t": "button", "b": -1, "down": True},
    {"t": "button", "b": 1.0, "down": True},
    {"t": "button", "b": [0], "down": True},
    {"t": "button", "b": 0, "down": "yes"},
    {"t": "button", "b": 0},
    {"t": "wheel", "dx": float("nan"), "dy": 1},
    {"t": "wheel", "dy": 1},
    {"t": "key"},
    {"t": "key", "code": "KeyA"},
    {"t": "key", "code": "KeyA", "down": 1},
    {"t": "key", "code": ["KeyA"], "down": True},
    {"t": "key", "code": {"KeyA": 1}, "down": False},
    {"t": "key", "code": 65, "down": True},
    {"t": "key", "code": "NoSuchKey", "down": True},
    {"t": "key", "code": None, "down": True, "ctrl": "yes"},
    {"t": "text"},
    {"t": "text", "s": 5},
    {"t": "text", "s": ["a"]},
    {"t": "text", "s": ""},
    {"t": "paste", "s": None},
    {"t": "paste", "s": {"a": 1}},
    {"t": "focus", "on": "yes"},
    {"t": "focus"},
]


@pytest.mark.parametrize("event", MALFORMED, ids=[json.dumps(event, default=str) for event in MALFORMED])
def test_a_malformed_event_is_dropped_without_raising(context, event):
    app = page_app()
    remote_input.apply(app, event)
    assert context.input_events_queue.size() == 0
    assert not app.quit and "screenshot" not in app.said
    imgui.new_frame()  # and the frame after it runs
    imgui.end_frame()


# ---- the command line ----------------------------------------------------------------------------
def one_line_error(result, *said: str) -> None:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.stderr, result.stderr
    for words in said:
        assert words in lines[0], lines[0]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--token-file", "token.txt"], ["--token-file is for --serve"]),
        (["--certfile", "cert.pem"], ["--certfile is for --serve"]),
        (["--serve", "70000"], ["[HOST:]PORT", "'70000'"]),
        (["--serve", "0", "--token-file", "nowhere.txt"], ["cannot read --token-file"]),
        (["--serve", "0", "--certfile", "cert.pem"], ["--certfile and --keyfile go together"]),
        (["--serve", "0", "--screenshot-after", "3"], ["--screenshot-after is for the desktop window"]),
        (["--headless", "--serve", "8080"], ["--serve serves the window", "--headless opens no window"]),
        (["--headless", "--token-file", "token.txt"], ["--token-file serves the window"]),
        (["--grad-check", "--serve", "8080"], ["--grad-check opens no window"]),
    ],
)
def test_serve_options_refused_before_the_gpu_starts(tmp_path, args, said):
    one_line_error(run_app(None, tmp_path, "--fresh", *args), *said)


def test_no_display_names_both_ways_on(tmp_path, monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    result = run_app(None, tmp_path, "--fresh")
    one_line_error(result, "no display", "--serve", "--headless")


def test_a_port_in_use_is_one_line(gpu, tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_app(gpu, tmp_path, "--fresh", "--serve", str(port))
    one_line_error(result, f"cannot serve on 127.0.0.1:{port}")
    assert result.stdout == "", "no URL printed for a server that is not there"


# ---- a served app, driven by a scripted viewer -----------------------------------------------------
QUIET_S = 1.0  # a paused, idle app sends no byte for this long


def centre(rect) -> tuple[float, float]:
    x0, y0, x1, y1 = rect
    return (x0 + x1) / 2, (y0 + y1) / 2


async def frames_within(ws, seconds: float) -> list[bytes]:
    """The frames that arrive within `seconds`; text messages are skipped."""
    frames, deadline = [], time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        try:
            message = await ws.receive(timeout=left)
        except asyncio.TimeoutError:
            break
        if message.type == aiohttp.WSMsgType.BINARY:
            frames.append(message.data)
        else:
            assert message.type == aiohttp.WSMsgType.TEXT, message
    return frames


async def until_quiet(ws, hub: Hub, most_s: float) -> int:
    """Frames received until QUIET_S passes with none, and no byte sent meanwhile; fails after `most_s`."""
    count, deadline = 0, time.monotonic() + most_s
    while time.monotonic() < deadline:
        sent = hub.bytes_sent
        got = await frames_within(ws, QUIET_S)
        if not got and hub.bytes_sent == sent:
            return count
        count += len(got)
    raise AssertionError(f"still sending frames {most_s} s after the pause ({count} frames)")


async def next_frames(ws, count: int, seconds: float) -> list[bytes]:
    """The next `count` frames, or fewer where `seconds` pass first."""
    frames, deadline = [], time.monotonic() + seconds
    while len(frames) < count and time.monotonic() < deadline:
        frames += await frames_within_one(ws, deadline - time.monotonic())
    return frames


async def frames_within_one(ws, seconds: float) -> list[bytes]:
    try:
        message = await ws.receive(timeout=max(seconds, 0.0))
    except asyncio.TimeoutError:
        return []
    return [message.data] if message.type == aiohttp.WSMsgType.BINARY else []


async def drive(server, app, window, seen: dict) -> None:
    """Watches training, clicks Pause, sees the frames stop, moves the mouse, sees one, quits."""
    port, began = server.port, time.monotonic()
    async with aiohttp.ClientSession() as session:
        url = f"ws://127.0.0.1:{port}/ws?token={server.address.token}"
        async with session.ws_connect(url, headers={"Origin": f"http://127.0.0.1:{port}"}) as ws:
            assert (await received_json(ws, "control"))["you"]
            await ws.send_json({"t": "size", "w": 720, "h": 450, "dpr": 1})
            training = await next_frames(ws, 8, 20.0)
            sizes = {simplejpeg.decode_jpeg_header(frame)[:2] for frame in training[-3:]}
            seen["training frames"], seen["sizes"] = len(training), sizes
            assert app.running and len(set(training)) >= 3, "frames change while it trains"
            assert sizes == {(450, 720)}, "the UI takes the page's size"
            x, y = centre(app.rects["pause"])
            for event in ({"t": "move", "x": x, "y": y}, {"t": "button", "b": 0, "down": True}):
                await ws.send_json(event)
            await ws.send_json({"t": "button", "b": 0, "down": False})
            seen["frames after pause"] = await until_quiet(ws, server.hub, 20.0)
            assert not app.running, "the click on Pause paused training"
            looped = window.frames
            await asyncio.sleep(served_window.QUIET_AFTER_S + 2.0)
            seen["loops quiet"] = window.frames - looped  # 60 a second before: 50% of a core on lavapipe
            assert seen["loops quiet"] <= (served_window.QUIET_AFTER_S + 2.0) / served_window.QUIET_FRAME_S + 5
            step = app.session.trainer.step
            await ws.send_json({"t": "move", "x": x, "y": y + 120})  # off the button: its highlight goes
            seen["frames after move"] = len(await next_frames(ws, 1, 5.0))
            assert seen["frames after move"] == 1, "a mouse move that changes the UI sends a frame"
            assert app.session.trainer.step == step
            await ws.send_json({"t": "key", "code": "KeyQ", "down": True, "ctrl": True})
    seen["seconds driven"] = round(time.monotonic() - began, 1)


def test_a_viewer_pauses_a_served_app_and_then_gets_no_bytes_until_it_moves(gpu, tmp_path, monkeypatch):
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    made: queue.Queue = queue.Queue()

    class RecordedServer(Server):
        def start(self) -> None:
            super().start()
            made.put(self)

    class RecordedWindow(served_window.ServedWindow):
        def __init__(self, *args):
            super().__init__(*args)
            made.put(self)

    monkeypatch.setattr(served_window, "Server", RecordedServer)
    monkeypatch.setattr(served_window, "ServedWindow", RecordedWindow)
    seen: dict = {}
    failures: list = []

    def viewer() -> None:
        server = app = None
        try:
            began = time.monotonic()
            server, window = made.get(timeout=120), made.get(timeout=120)
            app = window.app if window is not None else None
            seen["seconds to open"] = round(time.monotonic() - began, 1)
            if server is not None and app is not None:
                asyncio.run(asyncio.wait_for(drive(server, app, window, seen), 60))
        except BaseException as error:  # the test's thread reports it
            failures.append(error)
        finally:
            if app is not None:
                app.quit = True  # the app ends whatever happened

    thread = threading.Thread(target=viewer, daemon=True)
    thread.start()
    # A device of its own: the served app closes its device as it ends, as the window does, and the
    # session's shared one must outlive it (a later test's Session on it crashed in lavapipe)
    own = create_gpu()
    result = run_app(own, tmp_path, "--fresh", "--serve", "0", "--token-file", str(token_file))
    made.put(None)
    made.put(None)
    thread.join(timeout=30)
    if failures:
        raise failures[0]
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    lines = result.stdout.splitlines()
    assert (
        len(lines) == 1 and lines[0].startswith("serving: http://127.0.0.1:") and lines[0].endswith(f"/?token={TOKEN}")
    )
    assert seen["frames after pause"] < 30, seen


def test_a_quiet_loop_wakes_as_input_arrives():
    """Paused and quiet, the loop waits up to QUIET_FRAME_S between frames; an event ends the wait
    at once and is the first the next frame takes."""
    window = served_window.ServedWindow.__new__(served_window.ServedWindow)
    window.hub, window.held = Hub(), []
    began = time.monotonic()
    window._wait_for_input(0.2)
    assert time.monotonic() - began >= 0.19 and window.held == [], "nothing came: the wait ran out"
    event = {"t": "move", "x": 1, "y": 2}
    threading.Timer(0.05, lambda: window.hub.inputs.put((1, event))).start()
    began = time.monotonic()
    window._wait_for_input(30.0)
    assert time.monotonic() - began < 10.0 and window.held == [event]
    window._wait_for_input(30.0)  # input already waiting: no wait at all
    assert window.held == [event]


@pytest.mark.parametrize(
    "viewers, trains, software, idle_s, expected",
    [
        (1, True, False, 1.0, served_window.TRAINING_FRAME_S),  # training on a GPU, watched, untouched
        (1, True, False, 0.05, served_window.RESPONSIVE_FRAME_S),  # just touched: a click shows soon
        (0, True, False, 1.0, served_window.FRAME_S),  # nobody watching: nothing drawn to save
        (1, False, False, 1.0, served_window.FRAME_S),  # paused, or a race has the frames
        (1, True, True, 1.0, served_window.FRAME_S),  # a CPU driver: app/ui/redraw.py paces its UI
    ],
)
def test_a_watched_gpu_training_gets_longer_frames_until_input(viewers, trains, software, idle_s, expected):
    window = served_window.ServedWindow.__new__(served_window.ServedWindow)
    window.app = SimpleNamespace(trains_main=trains, gpu=SimpleNamespace(software=software))
    window.viewers, window.input_at = viewers, 100.0
    assert window._frame_seconds(100.0 + idle_s) == expected
    assert served_window.TRAINING_FRAME_S > max(served_window.FRAME_S, served_window.RESPONSIVE_FRAME_S)


@pytest.mark.parametrize(
    "events, acted",
    [
        ([{"t": "move", "x": 5, "y": 5}], False),
        ([{"t": "button", "b": 0, "down": True}], False),  # a press shows itself in its own frame
        ([{"t": "button", "b": 0, "down": False}], True),  # a release clicks
        ([{"t": "key", "code": "Space", "down": True}], True),
        ([{"t": "key", "code": "Space", "down": False}], False),
        ([{"t": "move", "x": 5, "y": 5}, {"t": "button", "b": 0, "down": False}], False),  # the release waits a frame
    ],
)
def test_a_release_or_a_key_press_is_input_that_acts(context, events, acted):
    window = served_window.ServedWindow.__new__(served_window.ServedWindow)
    window.app, window.hub, window.held = page_app(), Hub(), []
    window.app.renderer = SimpleNamespace(make_current=lambda: None)
    for event in events:
        window.hub.inputs.put((1, event))
    assert window._take_input() is acted


def test_the_frame_a_click_acts_in_is_built_undrawn_and_the_next_drawn_at_once():
    """The click's frame draws the button as it was before the click: it is built without drawing,
    and the frame after it, which shows what the click did, follows with no wait."""
    happened = []
    app = SimpleNamespace(
        quit=False, running=True, vsync=True, trains_main=True, gpu=SimpleNamespace(software=False),
        frames=SimpleNamespace(budget=SimpleNamespace(frame_seconds=None)),
    )  # fmt: skip
    window = served_window.ServedWindow.__new__(served_window.ServedWindow)
    window.app, window.hub, window.held, window.viewers, window.input_at = app, Hub(), [], 1, time.perf_counter()
    acting = iter([True, False])

    def frame(delta_time, draw=True):
        happened.append(("drawn" if draw else "built") + (", acting" if window._input_waiting() else ""))
        app.quit = sum(what.startswith("drawn") for what in happened) == 2
        return draw

    window._take_input, window._frame = lambda: next(acting), frame
    window._wait_for_input = lambda seconds: happened.append("wait")
    window._follow_viewers = window._share_clipboard = lambda: None
    window._loop([])
    # both frames of the click train only their first buffer of steps (FrameDriver.input_waiting)
    assert happened == ["built, acting", "drawn, acting", "wait", "drawn", "wait"]


@pytest.mark.parametrize(
    "event, waits",
    [
        ({"t": "button", "b": 0, "down": True}, True),
        ({"t": "button", "b": 0, "down": False}, True),
        ({"t": "key", "code": "Space", "down": True}, True),
        ({"t": "move", "x": 5, "y": 5}, False),  # hovering does not slow training
        ({"t": "wheel", "dx": 0, "dy": 1}, False),
    ],
)
def test_a_button_or_key_waiting_cuts_the_frames_training_short_until_taken(context, event, waits):
    window = served_window.ServedWindow.__new__(served_window.ServedWindow)
    window.app, window.hub, window.held, window.acting = page_app(), Hub(), [], False
    window.app.renderer = SimpleNamespace(make_current=lambda: None)
    assert not window._input_waiting()
    window.hub.put_input(1, event)
    assert window._input_waiting() is waits
    window._take_input()
    assert not window._input_waiting(), "taken: the flag is cleared"
    window.hub.put_input(1, {"t": "move", "x": 1, "y": 1})
    window.hub.put_input(1, {"t": "button", "b": 0, "down": False})
    window._take_input()  # a release after a move waits for the next frame, in held
    assert window.held and window._input_waiting()


def test_input_waiting_records_a_frames_first_buffer_of_steps_only(make_session):
    """A frame's whole steps go in buffers of FRAME_FIRST_SUBMIT_STEPS, then FRAME_SUBMIT_STEPS; with
    input waiting none follows the first, and the work the budget learns from is what ran."""
    from app.loop import frame_driver
    from app.loop.budget import TrainingWork

    session = make_session(hidden=[8], batch_size=64, seed=1)
    driver = frame_driver.FrameDriver(session)
    first = frame_driver.FRAME_FIRST_SUBMIT_STEPS
    planned = first + 2 * frame_driver.FRAME_SUBMIT_STEPS
    assert driver._submit_training(TrainingWork("steps", planned, planned * 64)) == range(0, planned)
    driver.input_waiting = lambda: True
    assert driver._submit_training(TrainingWork("steps", planned, planned * 64)) == range(planned, planned + first)
    session.gpu.device.wait()
    assert session.trainer.step == planned + first


def test_a_pixel_ratio_and_back_leaves_the_ui_as_it_was(gpu):
    """A page of devicePixelRatio 2 takes control, then one of 1: the UI's sizes are those it had
    before (they compounded: padding and widgets stayed enlarged)."""
    from app.ui.renderer import UiRenderer

    renderer = UiRenderer(gpu.device, 640, 400)
    try:
        style = imgui.get_style()
        before = (style.window_padding.x, style.item_spacing.y, style.frame_padding.x, style.scrollbar_size)
        renderer.set_scale(2.0)
        assert style.font_scale_main == 2.0 and style.window_padding.x == 2 * before[0]
        assert px(1.5) == 3.0, "plot lines and markers, which the style does not scale, scale too"
        renderer.set_scale(1.0)
        after = (style.window_padding.x, style.item_spacing.y, style.frame_padding.x, style.scrollbar_size)
        assert after == before and style.font_scale_main == 1.0
    finally:
        renderer.destroy()
