"""Commands bounded in time, their output bounded in size: what every engine and check of the
fleet runs a node-side script with (a node's answer is untrusted: it may never end)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import Optional

from tipcgen.inputs import read_head

# Seconds an ssh command may take beyond ssh's own ConnectTimeout (authentication, a few sha256s).
SLACK = 20.0
MAX_ANSWER = 1 << 20  # bytes kept of what a node prints in answer to a check (a few hundred)


def drain(pipe, into: list, cap: int = MAX_ANSWER) -> threading.Thread:
    """A started thread reading `pipe` to its end, keeping its first `cap` bytes in `into` (a
    node's answer is untrusted: it may never end)."""
    return read_head(pipe, into, cap)


def _feed(pipe, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the remote side may end without reading it all
        pipe.write(data)
        pipe.close()


def run_bounded(argv: Sequence[str], timeout: float, data: Optional[bytes] = None) -> tuple[Optional[int], str, str]:
    """(exit code or None when it outlived `timeout`, stdout, stderr, each cut at MAX_ANSWER);
    a late one is killed. `data`: its stdin."""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL if data is None else subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    out: list = []
    err: list = []
    readers = [drain(proc.stdout, out), drain(proc.stderr, err)]
    if data is not None:
        threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True).start()
    code: Optional[int]
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        code = None
    for reader in readers:  # a process it left behind may hold the pipes: bounded
        reader.join(SLACK)
    return code, b"".join(out).decode("utf-8", "replace"), b"".join(err).decode("utf-8", "replace")
