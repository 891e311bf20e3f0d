"""migrate's verdict cache: `tipcgen migrate` records the Migration it computed, `--apply` after it
reuses it when nothing it depends on changed, instead of running every script again.

The key is a hash of every input: the repo's path, each file below its test_tipc/ and its
.gitignore (path and bytes), tipcgen's own code and templates (their content), the modes, the timeout,
whether the sandbox was on, and the options that shape the new tree. Any change is a miss. The
record lives in the user's cache dir (prepare's: $TIPC_CACHE or ~/.cache/tipcgen), written through
fsio's gate, read through the input gate; a missing, unreadable, corrupt or mistyped record is a
miss; one that cannot be written is not written. `TIPC_MIGRATE_CACHE=0` turns it off.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any, Optional, Union, get_args, get_origin, get_type_hints

from tipcgen.errors import TipcError
from tipcgen.fsio import cache_dir, is_temp, write_text
from tipcgen.inputs import dirs_below, read_bytes, read_json
from tipcgen.migrate.entries import EntryPoint, EntryRow
from tipcgen.migrate.runcache import enabled
from tipcgen.migrate.switch import Migration, Row, RowDifference

VERSION = 3  # 3: the record's fields are the Migration's own (1 lacked the .gitignore lines --apply appends)
KEEP = 16  # records kept (the newest): one per repo and option set being migrated
MAX_RECORD_BYTES = 256 << 20  # the new tree's bytes are in it (PaddleClas: a few MiB)
MAX_INPUT_BYTES = 64 << 20  # one file of test_tipc/ hashed


def options(
    modes: tuple, timeout: float, sandbox: bool, configs: Optional[str], layout: str, runner: Optional[str]
) -> dict:
    """Every option that shapes the comparison or the new tree: part of the key."""
    return {"modes": modes, "timeout": timeout, "sandbox": sandbox, "configs": configs, "layout": layout,
            "runner": runner}  # fmt: skip


def input_key(root: str, options: Mapping[str, Any]) -> Optional[str]:
    """The hash of everything the Migration of `root` depends on; None when a file cannot be read
    (then nothing is cached: the run computes and reports as usual)."""
    from tipcgen.emit.check_cache import code_digest

    digest = hashlib.sha256()
    # the root too: the record names the repo's configs by their paths there
    material = [VERSION, code_digest(), os.path.abspath(root), dict(sorted(options.items()))]
    digest.update(json.dumps(material, default=str).encode())
    tipc = os.path.join(root, "test_tipc")
    paths = [os.path.join(root, ".gitignore")] if os.path.lexists(os.path.join(root, ".gitignore")) else []
    for dirpath, dirs, names in dirs_below(tipc):
        dirs.sort()
        paths += [os.path.join(dirpath, n) for n in sorted(names) if not is_temp(n)]
    # the repo's docs name the modes the whole-tree oracle runs each script in
    docs = os.path.join(root, "docs")
    for dirpath, dirs, names in dirs_below(docs) if os.path.isdir(docs) and not os.path.islink(docs) else ():
        dirs.sort()
        paths += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(".md")]
    try:
        for path in paths:
            data = read_bytes(path, MAX_INPUT_BYTES, tree=root, what="a repo file", links=False)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            digest.update(rel.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    except (TipcError, OSError):
        return None  # a link, a FIFO, an unreadable file: the comparison says what it makes of it
    return digest.hexdigest()


def _path(environ: Mapping[str, str], key: str) -> Path:
    return Path(cache_dir(environ)) / "migrate" / f"v{VERSION}-{key}.json"


def _row(data: dict) -> Row:
    found = [RowDifference(**d) for d in data.pop("differences")]
    return Row(**data, differences=found)


def _entry(data: dict) -> EntryRow:
    return EntryRow(**{**data, "entry": EntryPoint(**data["entry"])})


def _files_in(data: dict) -> dict[str, bytes]:
    files = {rel: base64.b64decode(text, validate=True) for rel, text in data.items()}
    if any(rel.startswith("/") or ".." in rel.split("/") for rel in files):
        raise ValueError("not a tree tipcgen wrote")  # apply's check_tree would refuse it anyway
    return files


_rows: tuple[Callable[[Any], Any], Callable[[Any], Any]] = (
    lambda rows: [asdict(r) for r in rows],
    lambda data: [_row(r) for r in data],
)
# The fields JSON cannot hold as they are: (to the record, back). Every other field of the Migration
# is recorded as it is, so a field added to it is cached with no line here (and one JSON cannot
# hold makes the record unwritable: a miss, never a Migration short of a field).
_CODECS: dict[str, tuple[Callable[[Any], Any], Callable[[Any], Any]]] = {
    "files": (lambda files: {rel: base64.b64encode(b).decode("ascii") for rel, b in files.items()}, _files_in),
    "rows": _rows,
    "chain_rows": _rows,
    "prepare_rows": _rows,
    "entries": (lambda entries: [asdict(e) for e in entries], lambda data: [_entry(e) for e in data]),
    "sources": (
        lambda sources: [[model, file, source] for (model, file), source in sources.items()],
        lambda data: {(model, file): source for model, file, source in data},
    ),
}
_RECORDED = [f.name for f in fields(Migration) if f.name != "root"]  # root: the path as given now
_HINTS = get_type_hints(Migration)


def _plain(name: str, value: Any) -> Any:
    """A field recorded as it is, back in the JSON type its annotation names (a record of another
    shape is not ours: a miss)."""
    want = get_origin(_HINTS[name]) or _HINTS[name]
    if want is Union:  # Optional[str]
        want = tuple(get_origin(a) or a for a in get_args(_HINTS[name]))
    if not isinstance(value, want):
        raise TypeError(f"{name}: {type(value).__name__}")
    return value


def load(environ: Mapping[str, str], key: Optional[str], root: str) -> Optional[Migration]:
    """The recorded Migration for `key` (its root: `root`, as given now), or None."""
    if key is None or not enabled(environ):
        return None
    path = _path(environ, key)
    try:
        data = read_json(str(path), str(path.parent), dict, what="tipcgen's migrate cache", limit=MAX_RECORD_BYTES,
                         links=False, values=MAX_RECORD_BYTES, objects=MAX_RECORD_BYTES)  # fmt: skip
        if data.get("version") != VERSION or data.get("key") != key:
            return None
        recorded = data["fields"]
        values = {n: _CODECS[n][1](recorded[n]) if n in _CODECS else _plain(n, recorded[n]) for n in _RECORDED}
        return Migration(root=root, **values)
    except (TipcError, OSError, KeyError, TypeError, ValueError, AttributeError):
        return None  # absent, or not ours: the run computes everything


def store(environ: Mapping[str, str], key: Optional[str], m: Migration) -> None:
    """Record `m` under `key` (best effort), keeping the newest KEEP records."""
    if key is None or not enabled(environ):
        return
    recorded = {n: _CODECS[n][0](getattr(m, n)) if n in _CODECS else getattr(m, n) for n in _RECORDED}
    data = {"version": VERSION, "key": key, "fields": recorded}
    path = _path(environ, key)
    with contextlib.suppress(TipcError, OSError, TypeError, ValueError):  # best effort: unwritten is a miss later
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_text(str(path), json.dumps(data, separators=(",", ":")), mode=0o600)
        records = sorted(path.parent.glob(f"v{VERSION}-*.json"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in records[KEEP:]:
            old.unlink()
