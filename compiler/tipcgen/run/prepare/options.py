"""How prepare fetches (`Options`, from the TIPC_* environment variables) and its error type."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from tipcgen.emit.prepare import CACHE_ENV, DEFAULT_CACHE
from tipcgen.errors import TipcError, UsageError


class FetchError(TipcError):
    """A download, check or extraction failed: the CLI prints the message and exits 1."""

    exit_code = 1


def _echo(line: str) -> None:
    print(line, flush=True)


def _warn(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _env_number(env: Mapping[str, str], name: str, default: str, cast: Callable, minimum: float, what: str) -> Any:
    """A numeric setting from the environment, or a UsageError naming it."""
    try:
        value = cast(env.get(name, default))
        if value < minimum:
            raise ValueError
    except ValueError:
        raise UsageError(f"{name} must be {what}, not {env.get(name)!r}") from None
    return value


def _flag(name: str, value: str) -> bool:
    low = value.strip().lower()
    if low in ("1", "true", "yes"):
        return True
    if low in ("", "0", "false", "no"):
        return False
    raise UsageError(f"{name} must be 1 or 0, not {value!r}")


def _cache_dir(env: Mapping[str, str]) -> str:
    """$TIPC_CACHE, else ~/.cache/tipcgen (with the HOME of ENV when it has one)."""
    home = env.get("HOME")
    default = os.path.join(home, ".cache", "tipcgen") if home else os.path.expanduser(DEFAULT_CACHE)
    return env.get(CACHE_ENV) or default


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
    progress: bool = False
    python: str = field(default_factory=lambda: sys.executable)
    echo: Callable[[str], None] = _echo
    warn: Callable[[str], None] = _warn

    @classmethod
    def from_env(cls, env: Optional[Mapping[str, str]] = None, **over: Any) -> Options:
        environ: Mapping[str, str] = os.environ if env is None else env
        offline = _flag("TIPC_OFFLINE", environ.get("TIPC_OFFLINE", "0"))
        retries = _env_number(environ, "TIPC_RETRIES", "3", int, 1, "a positive integer")
        backoff = _env_number(environ, "TIPC_BACKOFF", "1", float, 0, "a number of seconds")
        timeout = _env_number(environ, "TIPC_TIMEOUT", "30", int, 1, "a positive integer")
        mirror = environ.get("TIPC_MIRROR", "").rstrip("/")
        if mirror and not mirror.startswith(("http://", "https://", "file://")):
            raise UsageError(f"TIPC_MIRROR must be an http(s) or file URL, not {mirror!r}")
        layout = environ.get("TIPC_MIRROR_LAYOUT", "") or "base"
        if layout not in ("base", "host"):
            raise UsageError(f"TIPC_MIRROR_LAYOUT must be base or host, not {layout!r}")
        opts = cls(
            cache=Path(_cache_dir(environ)),
            mirror=mirror,
            mirror_layout=layout,
            offline=offline,
            retries=retries,
            backoff=backoff,
            timeout=float(timeout),
            progress=sys.stderr.isatty(),
        )
        for key, value in over.items():
            if value is not None:
                setattr(opts, key, value)
        return opts
