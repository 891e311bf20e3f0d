"""How prepare fetches (`Options`, from the TIPC_* environment variables) and its error type.

The bounds on what a download and an extraction may cost (prepare.sh reads the same variables,
with the same defaults, in templates/prepare_lib.sh):

- TIPC_DEADLINE: seconds one file may take, every try and back-off included. Default: 600 s plus
  1 s per 256 KiB of the declared `size` (a slow link still finishes, a server dripping bytes
  does not hold a CI job for ever), or 3600 s when the step declares no size.
- TIPC_MAX_SIZE: bytes a download without a declared `size` may have (default 20 GiB: more than
  any model's weights or TIPC dataset; a declared size is the bound otherwise, reviewed with the
  spec). Either is enforced while the bytes arrive: the download stops at the bound + 1 byte.
- TIPC_MAX_EXTRACT, TIPC_MAX_RATIO: an archive extracts to at most TIPC_MAX_RATIO times its size
  (counted as at least 1 MiB; default 100, where real datasets and weights are 1-10 and zip or
  gzip bombs 1000) and never more than TIPC_MAX_EXTRACT bytes (default 64 GiB).
- MAX_REDIRECTS (20, as wget and httpx): more is a loop.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from tipcgen.errors import TipcError, UsageError
from tipcgen.fsio import cache_dir


class FetchError(TipcError):
    """A download, check or extraction failed: the CLI prints the message and exits 1."""

    exit_code = 1


def _echo(line: str) -> None:
    print(line, flush=True)


def _warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


MAX_REDIRECTS = 20
KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30
DEADLINE_BASE = 600  # seconds every download may take, plus the time its declared size needs at:
DEADLINE_RATE = 256 * KIB  # bytes a second
DEADLINE_UNSIZED = 3600
MAX_SIZE = 20 * GIB
MAX_EXTRACT = 64 * GIB
MAX_RATIO = 100
RATIO_FLOOR = MIB  # an archive smaller than this may still extract to RATIO MiB
MAX_BYTES = 1 << 50  # 1 PiB: the largest size any setting (or a spec's `size`) may say
_UNITS = {"": 1, "K": KIB, "M": MIB, "G": GIB, "T": 1 << 40}


def _env_number(
    env: Mapping[str, str], name: str, default: str, cast: Callable, minimum: float, what: str, most: float
) -> Any:
    """A numeric setting from the environment (finite, from MINIMUM to MOST), or a UsageError naming it."""
    raw = env.get(name, default)
    try:
        value = cast(raw) if len(raw) <= 20 else None
        if value is None or not math.isfinite(value) or not minimum <= value <= most:
            raise ValueError
    except ValueError:
        raise UsageError(f"{name} must be {what} (at most {most:g}), not {raw!r}") from None
    return value


def _env_bytes(env: Mapping[str, str], name: str, default: int) -> int:
    """A size from the environment: bytes, or a number with a K, M, G or T (binary) suffix."""
    raw = env.get(name, "")
    if not raw:
        return default
    digits, unit = (raw[:-1], raw[-1].upper()) if raw[-1:].isalpha() else (raw, "")
    if not (digits.isascii() and digits.isdigit() and len(digits) <= 16 and unit in _UNITS):
        raise UsageError(f"{name} must be a number of bytes, optionally with a K, M, G or T suffix, not {raw!r}")
    value = int(digits) * _UNITS[unit]
    if not 1 <= value <= MAX_BYTES:
        raise UsageError(f"{name} must be from 1 byte to 1P, not {raw!r}")
    return value


def _flag(name: str, value: str) -> bool:
    low = value.strip().lower()
    if low in ("1", "true", "yes"):
        return True
    if low in ("", "0", "false", "no"):
        return False
    raise UsageError(f"{name} must be 1 or 0, not {value!r}")


@dataclass
class Options:
    """How prepare fetches: from the TIPC_* environment variables, like prepare.sh."""

    cache: Path
    mirror: str = ""
    mirror_layout: str = "base"  # TIPC_MIRROR_LAYOUT: base | host (see http.source_url)
    offline: bool = False
    retries: int = 3
    backoff: float = 1.0
    timeout: float = 30.0
    deadline: Optional[float] = None  # TIPC_DEADLINE; None: from the declared size (deadline_for)
    max_size: int = MAX_SIZE
    max_extract: int = MAX_EXTRACT
    max_ratio: int = MAX_RATIO
    file_root: str = ""  # TIPC_ALLOW_FILE_URLS: the directory a spec's file:// URLs may read
    progress: bool = False
    python: str = field(default_factory=lambda: sys.executable)
    echo: Callable[[str], None] = _echo
    warn: Callable[[str], None] = _warn

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None, **over: Any) -> Options:
        environ: Mapping[str, str] = os.environ if env is None else env
        offline = _flag("TIPC_OFFLINE", environ.get("TIPC_OFFLINE", "0"))
        retries = _env_number(environ, "TIPC_RETRIES", "3", int, 1, "a positive integer", 100)
        backoff = _env_number(environ, "TIPC_BACKOFF", "1", float, 0, "a number of seconds", 3600)
        timeout = _env_number(environ, "TIPC_TIMEOUT", "30", int, 1, "a positive integer", 3600)
        deadline = None
        if environ.get("TIPC_DEADLINE"):
            deadline = _env_number(environ, "TIPC_DEADLINE", "", int, 1, "a positive integer", 10_000_000)
        mirror = environ.get("TIPC_MIRROR", "").rstrip("/")
        if mirror and not mirror.startswith(("http://", "https://", "file:///")):
            raise UsageError(f"TIPC_MIRROR must be an http(s) or file:/// URL, not {mirror!r}")
        file_root = environ.get("TIPC_ALLOW_FILE_URLS", "")
        if file_root and not file_root.startswith("/"):
            raise UsageError(f"TIPC_ALLOW_FILE_URLS must be an absolute directory, not {file_root!r}")
        layout = environ.get("TIPC_MIRROR_LAYOUT", "") or "base"
        if layout not in ("base", "host"):
            raise UsageError(f"TIPC_MIRROR_LAYOUT must be base or host, not {layout!r}")
        opts = cls(
            cache=Path(cache_dir(environ)),
            mirror=mirror,
            mirror_layout=layout,
            offline=offline,
            retries=retries,
            backoff=backoff,
            timeout=float(timeout),
            deadline=None if deadline is None else float(deadline),
            max_size=_env_bytes(environ, "TIPC_MAX_SIZE", MAX_SIZE),
            max_extract=_env_bytes(environ, "TIPC_MAX_EXTRACT", MAX_EXTRACT),
            max_ratio=_env_number(environ, "TIPC_MAX_RATIO", "100", int, 1, "a positive integer", 1_000_000),
            file_root=file_root,
            progress=sys.stderr.isatty(),
        )
        for key, value in over.items():
            if value is not None:
                setattr(opts, key, value)
        return opts

    def deadline_for(self, size: str) -> float:
        """Seconds one download may take: TIPC_DEADLINE, else from the declared SIZE ("" unknown)."""
        if self.deadline is not None:
            return self.deadline
        if size:
            return float(DEADLINE_BASE + int(size) // DEADLINE_RATE)
        return float(DEADLINE_UNSIZED)

    def size_limit(self, size: str) -> int:
        """Bytes a download may have: its declared SIZE, else TIPC_MAX_SIZE."""
        return int(size) if size else self.max_size

    def extract_limit(self, archive_size: int) -> int:
        """Bytes an archive of ARCHIVE_SIZE bytes may extract to."""
        return min(self.max_extract, max(archive_size, RATIO_FLOOR) * self.max_ratio)
