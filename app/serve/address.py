"""Where the server listens and who may reach it: `[HOST:]PORT`, the token every request must carry
(printed in the URL, as Jupyter does, or read from --token-file) and the TLS files for HTTPS."""

from __future__ import annotations

import ipaddress
import secrets
import ssl
from dataclasses import dataclass
from pathlib import Path

from ..errors import UserError

DEFAULT_HOST = "127.0.0.1"
TOKEN_BYTES = 24  # 192 bits, printed as 32 URL-safe characters
MIN_TOKEN_CHARS = 22  # a --token-file's token: at least 128 bits of base64-like text


@dataclass(frozen=True)
class ServeAddress:
    host: str
    port: int
    token: str
    tls: ssl.SSLContext | None = None

    def warning(self, port: int | None = None) -> str | None:
        """A line for an address other machines can reach; None for loopback. `port`: the one
        bound, where the system chose it (port 0)."""
        if is_loopback(self.host):
            return None
        port = port or self.port
        return (
            f"warning: serving on {self.host}, reachable from other machines by anyone who has the URL; "
            f"an SSH tunnel keeps it local: ssh -L {port}:127.0.0.1:{port} SERVER, then --serve {port}"
        )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_address(text: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[IPv6]:PORT`; port 0 lets the system choose a free one."""
    host, sep, port = text.strip().rpartition(":")
    host = host.strip("[]") if sep else DEFAULT_HOST
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:  # '²' is a digit to isdigit
        raise UserError(f"--serve takes [HOST:]PORT with a port from 0 to 65535 (got {text!r})")
    return host or DEFAULT_HOST, int(port)


def read_token(path: str) -> str:
    """A --token-file's token: its first line, at least MIN_TOKEN_CHARS characters of URL-safe text."""
    try:
        lines = Path(path).read_text(encoding="utf-8").strip().splitlines()
    except OSError as error:
        raise UserError(f"cannot read --token-file {path!r}: {error.strerror or error}") from None
    except UnicodeDecodeError:
        raise UserError(f"--token-file {path!r} is not text") from None
    token = lines[0].strip() if lines else ""
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~")
    if len(token) < MIN_TOKEN_CHARS or not set(token) <= allowed:
        raise UserError(
            f"--token-file {path!r} must hold a token of at least {MIN_TOKEN_CHARS} characters of "
            "letters, digits, '-', '_', '.' and '~' on its first line"
        )
    return token


def tls_context(certfile: str | None, keyfile: str | None) -> ssl.SSLContext | None:
    """HTTPS and WSS from --certfile and --keyfile (both or neither)."""
    if certfile is None and keyfile is None:
        return None
    if certfile is None or keyfile is None:
        raise UserError("--certfile and --keyfile go together: give both for HTTPS")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        context.load_cert_chain(certfile, keyfile)
    except (OSError, ssl.SSLError) as error:
        raise UserError(f"cannot use --certfile {certfile!r} with --keyfile {keyfile!r}: {error}") from None
    return context


def serve_address(text: str, token_file: str | None, certfile: str | None, keyfile: str | None) -> ServeAddress:
    host, port = parse_address(text)
    token = read_token(token_file) if token_file else secrets.token_urlsafe(TOKEN_BYTES)
    return ServeAddress(host, port, token, tls_context(certfile, keyfile))


def add_serve_options(group, serve_help: str) -> None:
    """--serve (its help `serve_help`) and the options that go with it, on an argparse group: the
    window's and the sweep's command lines take the same ones."""
    group.add_argument("--serve", metavar="[HOST:]PORT", help=serve_help)
    group.add_argument("--token-file", metavar="FILE", help="with --serve: the token, from this file's first line")
    group.add_argument("--certfile", metavar="PEM", help="with --serve and --keyfile: serve HTTPS and WSS")
    group.add_argument("--keyfile", metavar="PEM", help="with --serve and --certfile: the certificate's key")
