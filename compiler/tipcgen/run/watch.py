"""What the stall watchdog looks at: a step's logs, and how to say a run hangs.

A train step's logs are its own log file and the `log/workerlog.*` files that
paddle.distributed.launch writes under the step's directory. The step is stalled when none of
them has changed size for the stall limit (the generated bash compares the same sizes).
"""

from __future__ import annotations

import glob
import os
from typing import Optional

from tipcgen.plan.limits import STALL_HINTS

__all__ = ["STALL_HINTS", "StallClock", "log_sizes", "worker_logs"]


def worker_logs(cwd: str) -> list[str]:
    """The launcher's per-worker logs under `cwd` (log/workerlog.0, ...), sorted."""
    return sorted(p for p in glob.glob(os.path.join(cwd, "log", "workerlog.*")) if os.path.isfile(p))


def log_sizes(cwd: str, log: Optional[str]) -> tuple:
    """(path, size) of the step's log (relative to `cwd`) and of each worker log: what grows
    while the step makes progress."""
    paths = ([os.path.join(cwd, log)] if log else []) + worker_logs(cwd)
    out = []
    for path in paths:
        try:
            out.append((path, os.path.getsize(path)))
        except OSError:
            continue
    return tuple(out)


class StallClock:
    """When a step's logs last grew: `quiet()` is how long they have not."""

    def __init__(self, cwd: str, log: Optional[str], now: float):
        self.cwd, self.log = cwd, log
        self.sizes = log_sizes(cwd, log)
        self.since = now

    def quiet(self, now: float) -> float:
        sizes = log_sizes(self.cwd, self.log)
        if sizes != self.sizes:
            self.sizes, self.since = sizes, now
        return now - self.since
