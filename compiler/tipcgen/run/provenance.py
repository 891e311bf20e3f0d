"""What a run record says about where it came from, so that old records stay readable and a
status page can say what changed between two runs: the record's schema version, tipcgen's
version, the model repo's commit (when it is a git checkout), the machine and paddle's version.

Records written before this block existed have none: readers take them as schema 1.

Reading records is here too, as one bounded reader (`read_record`) that `tipcgen status`,
`report` and `build --results` share: records come from pull requests and other machines, so each
is read as hostile input (a regular file, at most MAX_RECORD_BYTES, UTF-8 JSON with finite
numbers, bounded nesting, values and objects). What is a tipcgen record is decided in one place
(`record_kind`): a JSON object with a `record` block naming its kind, or a schema-1 record by the
fields only that kind writes. Any other JSON object beside the records (Paddle's
`backup_env.*.json` in a bench folder) is not a record: readers of a folder pass over it without
a word. A file that is not a JSON object at all (cut short, not UTF-8, too big) may be a record
whose writer died, so it is reported, never dropped silently.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from typing import Any, Optional

from tipcgen import __version__

SCHEMA = 2  # 1: the records before `record` existed (no block); 2: this block
_PADDLE_DISTS = ("paddlepaddle", "paddlepaddle-gpu")


def git_commit(root: str) -> Optional[str]:
    """HEAD of the git checkout `root` is in (None: not one, or git absent or slow)."""
    try:
        done = subprocess.run(
            ["git", "-C", root, "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if done.returncode == 0 and len(commit) in (40, 64) and commit.isalnum() else None


def paddle_version() -> Optional[str]:
    """The installed paddle distribution's version, read from its metadata: importing paddle
    takes seconds. It is the interpreter tipcgen runs in; a config's `python` may differ."""
    from importlib.metadata import PackageNotFoundError, version

    for dist in _PADDLE_DISTS:
        try:
            return version(dist)
        except PackageNotFoundError:
            continue
    return None


def machine() -> dict:
    return _known(
        {
            "host": platform.node(),
            "system": f"{platform.system()} {platform.release()}",
            "arch": platform.machine(),
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
        }
    )


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def provenance(kind: str, root: str = ".", finished_at: Optional[str] = None, ran: Optional[dict] = None) -> dict:
    """The `record` block of a `kind` (run | fleet | bench) record made from the repo at `root`;
    `ran`: what ran (check.source.what_ran: the suite and the config file). What is unknown (no
    git checkout, no paddle, not a node of a multi-node run) is left out."""
    ran = ran or {}
    return _known(
        {
            "schema": SCHEMA,
            "kind": kind,
            "suite": ran.get("suite"),  # a spec's suite (a legacy config: none, the file is the suite)
            "config": ran.get("config"),  # the spec or config file the run was planned from
            "tipcgen": __version__,
            "finished_at": finished_at or now(),
            "root": os.path.abspath(root),  # where the logs' relative paths start
            "node": os.environ.get("TIPC_NODE_IP") or None,  # which node of a multi-node suite ran it
            "model_commit": git_commit(root),
            "machine": machine(),
            "paddle": paddle_version(),
        }
    )


def _known(block: dict) -> dict:
    return {k: v for k, v in block.items() if v is not None and v != ""}


RECORD_KINDS = ("run", "fleet", "bench")
MAX_RECORD_BYTES = 4 << 20  # bench writes a few KiB, under 3 MiB with every curve full
MAX_RECORD_DEPTH = 32  # JSON nesting (a record nests 4 deep); Python's parser recurses per level
MAX_RECORD_VALUES = 150_000  # values of one record: 3 curves of 20 000 points and the rest
MAX_RECORD_OBJECTS = 20_000  # JSON objects of one record: a fleet of 64 nodes x 100 steps x 3
MAX_RECORD_DIGITS = 30  # digits of a JSON integer: no field needs more, and int() of a long one is slow


def read_record(path: str, tree: Optional[str] = None, links: bool = True) -> Any:
    """The JSON of the record file `path` within the bounds above, or a SpecError naming the
    file (and line or field): the one reader of untrusted records. `tree`: the directory the
    file must lie in (None: its own); `links=False`: no symbolic link at all."""
    from tipcgen.errors import Problem, SpecError, printable
    from tipcgen.inputs import parse_json, read_bytes

    raw = read_bytes(path, MAX_RECORD_BYTES, tree, what="a run record", links=links)
    if len(raw) > MAX_RECORD_BYTES:
        message = f"more than {MAX_RECORD_BYTES} bytes; a run record is at most {MAX_RECORD_BYTES >> 20} MiB"
        raise SpecError([Problem(printable(path), None, None, None, message)])
    return parse_json(
        raw,
        path,
        what="a JSON run record",
        limit=MAX_RECORD_BYTES + 1,
        depth=MAX_RECORD_DEPTH,
        values=MAX_RECORD_VALUES,
        objects=MAX_RECORD_OBJECTS,
        digits=MAX_RECORD_DIGITS,
    )


def record_kind(data: Any) -> Optional[str]:
    """run | fleet | bench for a tipcgen record, None for any other JSON. A `record` block names
    its kind (a block that is not an object, or names no kind tipcgen writes, is still a record
    claim: "?" so the reader reports it); a schema-1 record (before the block) is known by the
    fields only its kind writes."""
    if not isinstance(data, dict):
        return None
    if "record" in data:
        block = data["record"]
        kind = block.get("kind") if isinstance(block, dict) else None
        return kind if kind in RECORD_KINDS else "?"
    if isinstance(data.get("steps"), list) and "summary" in data:
        return "run"
    if isinstance(data.get("nodes"), list) and "first_failure" in data:
        return "fleet"
    if "run_id" in data and "ips" in data:
        return "bench"
    return None
