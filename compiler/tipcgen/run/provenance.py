"""What a run record says about where it came from, so that old records stay readable and a
status page can say what changed between two runs: the record's schema version, tipcgen's
version, the model repo's commit (when it is a git checkout), the machine and paddle's version.

Records written before this block existed have none: readers take them as schema 1.
"""

from __future__ import annotations

import datetime
import os
import platform
import subprocess
from typing import Optional

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


def provenance(kind: str, root: str = ".", finished_at: Optional[str] = None) -> dict:
    """The `record` block of a `kind` (run | fleet | bench) record made from the repo at `root`;
    what is unknown (no git checkout, no paddle, not a node of a multi-node run) is left out."""
    return _known(
        {
            "schema": SCHEMA,
            "kind": kind,
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
