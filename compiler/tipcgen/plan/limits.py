"""Step time limits: tipcgen's defaults, and what a spec's `limits` gives a step.

The Plan's steps carry the spec's limits (`Step.timeout`, `Step.stall`; None: the spec gives
none); `tipcgen run` and the generated bash fall back to the same defaults and accept the same
overrides (TIPC_STEP_TIMEOUT, TIPC_STALL_TIMEOUT; `tipcgen run --step-timeout/--stall-timeout`).
"""

from __future__ import annotations

import math
from typing import Any, Optional

KINDS = ("train", "eval", "export", "infer")
DEFAULT_SECONDS = 7200  # any step without a limit of its own: a lite run needs minutes
WHOLE_TRAIN_SECONDS = 259200  # a whole_train_whole_infer training step: 3 days

# What to turn on to find where a hung or failing run waits (after seed document 002's FAQ).
STALL_HINTS = (
    "to see which operator a hung run waits in, run it again with GLOG_v=3 and FLAGS_benchmark=1 "
    "exported (every operator is logged as it runs); a hang is usually two processes waiting for "
    "different collective calls",
    'for NCCL errors, export NCCL_DEBUG=INFO and look for the "NCCL WARN" lines',
)


def default_limit(kind: str, mode: str) -> int:
    """tipcgen's limit for a step the spec gives none (the stall watchdog is off by default)."""
    return WHOLE_TRAIN_SECONDS if kind == "train" and mode == "whole_train_whole_infer" else DEFAULT_SECONDS


def multinode(argv: Optional[tuple]) -> bool:
    """Whether a step launches on several nodes: an `--ips=` argument listing more than one
    (the generated bash tests the same argument, so both pick the same limit)."""
    return any(arg.startswith("--ips=") and "," in arg for arg in argv or ())


def spec_limit(limits: Any, kind: str, mode: str, multinode: bool = False) -> Optional[int]:
    """The limit (seconds) a spec's `limits` gives a `kind` step in `mode` (None: none). A train
    step on several nodes gets `multinode_factor` times its limit (tipcgen's default when the
    spec gives the factor alone)."""
    if limits is None:
        return None
    seconds = limits.seconds(kind, mode)
    factor = limits.multinode_factor
    if kind != "train" or not multinode or factor is None:
        return seconds
    return math.ceil((seconds or default_limit(kind, mode)) * factor)


def spec_stall(limits: Any, kind: str, mode: str) -> Optional[int]:
    """The stall limit of a train step (None: no watchdog unless TIPC_STALL_TIMEOUT asks)."""
    return limits.seconds("stall", mode) if limits is not None and kind == "train" else None


def limit_table(suites: list, modes: tuple) -> list[tuple[str, str, tuple]]:
    """(config file, mode, values) for the generated bash: the spec's train, eval, export and
    infer limits, the train limit on several nodes and the stall limit, 0 where the spec gives
    none. `suites`: (file name, Limits) pairs; rows the spec sets nothing in are left out."""
    rows = []
    for file, limits in suites:
        for mode in modes:
            values = (
                *(spec_limit(limits, kind, mode) or 0 for kind in KINDS),
                spec_limit(limits, "train", mode, multinode=True) or 0,
                spec_stall(limits, "train", mode) or 0,
            )
            if any(values):
                rows.append((file, mode, values))
    return rows
