"""Reading a config's bytes: size, NUL and UTF-8 checks, BOM/CRLF, the lines the scripts count."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NoReturn, Optional

from tipcgen.errors import Problem, SpecError
from tipcgen.inputs import read_bytes

MAX_BYTES = 1 << 20  # configs are a few KB; anything over a MiB is not one


class UndecodableConfig(SpecError):
    """A file that cannot be imported (binary, not UTF-8, too large, unknown layout)."""


def _fail(path: str, message: str, line: Optional[int] = None, hint: Optional[str] = None) -> NoReturn:
    raise UndecodableConfig([Problem(path, line, None, None, message, hint)])


class UnreadableFile(SpecError):
    """A config file the OS will not read (permissions, a symlink loop, a directory, EIO...).

    Not a defect of the config: `import --report` stops on it instead of counting a failed round trip."""


def read_config(path: str) -> bytes:
    """A config file's bytes; an OSError is an UnreadableFile naming the file and the OS's reason."""
    try:  # bounded, regular files only (no FIFO, no /dev/zero)
        return read_bytes(path, MAX_BYTES)
    except SpecError as exc:
        raise UnreadableFile(exc.problems) from None


@dataclass
class Decoded:
    """A config file's text split the way the importer and the scripts see it."""

    path: str
    text: str  # without BOM, with \n line ends
    lines: list  # non-empty lines
    blank_lines: list
    final_newline: bool
    bom: bool
    crlf: bool


def decode(path: str, data: bytes) -> Decoded:
    if len(data) > MAX_BYTES:
        _fail(path, f"file is {len(data) / 1e6:.1f} MB; a TIPC config is a few KB, so this is not one")
    if b"\0" in data:
        _fail(path, "binary file (it contains NUL bytes), not a TIPC config")
    bom = data.startswith(b"\xef\xbb\xbf")
    if bom:
        data = data[3:]
    try:
        text_ = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        _fail(path, f"not UTF-8 text (byte 0x{data[exc.start]:02x})", data[: exc.start].count(b"\n") + 1)
    crlf = "\r\n" in text_ and text_.count("\r\n") == text_.count("\n")
    if crlf:
        text_ = text_.replace("\r\n", "\n")
    if text_ == "":
        _fail(path, "empty file")
    final_newline = text_.endswith("\n")
    physical = text_.split("\n")
    if final_newline:
        physical.pop()
    blank = [i for i, line in enumerate(physical) if line == ""]
    return Decoded(path, text_, [line for line in physical if line != ""], blank, final_newline, bom, crlf)
