"""The whole-tree oracle's run cache: a recorded run of an entry point is a function of what was
staged for it (the tree's scripts, the one config at its path, the directories made, the
recorders), the entry point, its bound and tipcgen's code. Its record (the commands with no path
of the run's own, the exit status, the logs' names) is kept under the hash of all of them, so a
second migration of a tree (another option, a spec edited, `--runner` tried) runs again only what
changed, the old tree's side not at all.

Like the verdict cache (cache.py): in the user's cache dir, written through fsio's gate, read
through the input gate, a missing, corrupt or mistyped record is a miss, `TIPC_MIGRATE_CACHE=0`
turns it off. A run that reached its bound is not kept (the next one may finish).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from tipcgen.errors import TipcError
from tipcgen.fsio import cache_dir, write_text
from tipcgen.inputs import read_json

VERSION = 1
MAX_RECORD_BYTES = 8 << 20  # a run's commands (PaddleClas's runner: a few KiB)
KEEP = 50_000  # records kept (the newest): a whole PaddleClas tree in every mode, twice


def enabled(environ: Optional[Mapping[str, str]]) -> bool:
    """The one switch of migrate's caches (this one and the verdict cache): TIPC_MIGRATE_CACHE."""
    return environ is not None and environ.get("TIPC_MIGRATE_CACHE", "1").strip().lower() not in ("0", "false", "no")


def tree_digest(tree: Mapping[str, bytes], pythons: list) -> str:
    """The part of a key every run of one side shares: tipcgen's code (the harness, its shims),
    whether the sandbox is on, the recorders' names and the side's scripts."""
    from tipcgen import sandbox
    from tipcgen.emit.check_cache import code_digest

    digest = hashlib.sha256(json.dumps([VERSION, code_digest(), sandbox.enabled(), sorted(pythons)]).encode())
    for rel in sorted(tree):
        digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(tree[rel]).digest())
    return digest.hexdigest()


def key(side: str, argv: tuple, config: Optional[bytes], dirs: tuple, timeout: float) -> str:
    """One run's key: its side's digest, the entry point's argv (script, config path, mode), the
    config's bytes, the directories made for it and the bound."""
    material = [side, list(argv), hashlib.sha256(config).hexdigest() if config is not None else None, list(dirs)]
    return hashlib.sha256(json.dumps([*material, timeout]).encode()).hexdigest()


def _path(environ: Mapping[str, str], k: str) -> Path:
    return Path(cache_dir(environ)) / "migrate-runs" / k[:2] / f"v{VERSION}-{k}.json"


def _strs(value: Any) -> list:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise TypeError("a list of strings is wanted")
    return value


def load(environ: Optional[Mapping[str, str]], k: str) -> Optional[tuple[list, int, list]]:
    """(commands as (argv, CUDA_VISIBLE_DEVICES, cwd), exit status, log names) recorded for `k`, or None."""
    if not enabled(environ):
        return None
    assert environ is not None
    path = _path(environ, k)
    try:
        data = read_json(str(path), str(path.parent), dict, what="tipcgen's run cache", limit=MAX_RECORD_BYTES,
                         links=False, values=MAX_RECORD_BYTES, objects=MAX_RECORD_BYTES)  # fmt: skip
        if data.get("version") != VERSION or data.get("key") != k or type(data["returncode"]) is not int:
            return None
        commands = []
        for argv, cuda, cwd in data["commands"]:
            if not (cuda is None or isinstance(cuda, str)) or not isinstance(cwd, str):
                return None
            commands.append((tuple(_strs(argv)), cuda, cwd))
        return commands, data["returncode"], _strs(data["logs"])
    except (TipcError, OSError, KeyError, TypeError, ValueError):
        return None


def store(environ: Optional[Mapping[str, str]], k: str, commands: list, returncode: int, logs: list) -> None:
    """Record a finished run under `k` (best effort: unwritten is a miss later)."""
    if not enabled(environ):
        return
    assert environ is not None
    data = {"version": VERSION, "key": k, "commands": commands, "returncode": returncode, "logs": logs}
    path = _path(environ, k)
    with contextlib.suppress(TipcError, OSError, TypeError, ValueError):
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_text(str(path), json.dumps(data, separators=(",", ":")), mode=0o600)


def prune(environ: Optional[Mapping[str, str]]) -> None:
    """Keep the newest KEEP records (once per migration: listing them costs a directory walk)."""
    if not enabled(environ):
        return
    assert environ is not None
    top = Path(cache_dir(environ)) / "migrate-runs"
    with contextlib.suppress(OSError):
        records = [p for d in top.iterdir() if d.is_dir() and not d.is_symlink() for p in d.glob(f"v{VERSION}-*.json")]
        if len(records) <= KEEP:
            return
        records.sort(key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in records[KEEP:]:
            with contextlib.suppress(OSError):
                os.unlink(old)
