"""Errors the user can fix: the entry points print them on one line and exit with code 2;
reading a user's text file, where each way it can fail is one of them; counts in messages; and
the exit codes every command shares."""

from __future__ import annotations

from pathlib import Path

EXIT_USAGE = 2  # a UserError: bad input, one line on stderr
EXIT_DIVERGED = 3  # a headless run diverged (a race: every racer did)
EXIT_GRAD_CHECK = 4  # the gradient check found the training kernels' gradients wrong
EXIT_INTERRUPTED = 130  # Ctrl+C: what was trained is written first


class UserError(Exception):
    """Bad input (option, config file, output folder, device choice)."""


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` `noun`s as a message says it: "1 row", "0 rows", "1,024 rows"."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"


def first_line(error: BaseException) -> str:
    """What a one-line message shows of an error: its first line (sgl's compile and device
    errors are multi-line reports), or the error's type where its text is empty."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def read_user_bytes(path: str | Path, what: str, limit: int) -> bytes:
    """The bytes of the file at `path`, read no further than `limit` (a huge or endless file is
    refused, not read); a UserError naming `what` ("image") where it can't be read or is larger."""
    name = f"{what} {str(path)!r}"
    try:
        with open(path, "rb") as handle:
            raw = handle.read(limit + 1)
    except OSError as error:
        raise UserError(f"cannot read {name}: {error.strerror or error}") from None
    if len(raw) > limit:
        raise UserError(f"{name} is larger than {limit} bytes")
    return raw


def read_user_text(path: str | Path, what: str, limit: int) -> str:
    """The UTF-8 text of the file at `path` (read_user_bytes); a UserError naming `what`
    ("config file") where it is not UTF-8."""
    name = f"{what} {str(path)!r}"
    raw = read_user_bytes(path, what, limit)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UserError(f"{name} is not UTF-8 text (byte {error.start})") from None
