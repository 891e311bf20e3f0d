"""How much of a config x mode matrix a corpus test runs.

The largest sweeps (PaddleClas's 500+ configs x 5 runs against its real script, our bash against
our Plan on every corpus config in every mode) are most of CI's time, and a config's modes share
almost every line of both scripts. By default such a sweep runs every config in ONE of its
runs, rotating through them (config n gets run n mod k): every config is run, every mode and
GPUID variant of the sweep runs on about 1/k of each repo's configs, and the selection is the
same on every machine. `TIPC_FULL_SWEEP=1` runs the whole matrix (benchmarks/upstream_fidelity.py
--all prints the full fidelity tables from it too)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


def full_sweep() -> bool:
    return os.environ.get("TIPC_FULL_SWEEP", "") not in ("", "0")


def rotate(n: int, runs: Sequence[T]) -> list[T]:
    """The runs config number `n` gets: all of them under TIPC_FULL_SWEEP, else one, in turn."""
    return list(runs) if full_sweep() else [runs[n % len(runs)]]


def every_kth(items: Sequence[T], k: int, offset: int = 0) -> list[T]:
    """A stratified sample (every k-th, from `offset`) for a repeated pass; all of them under
    TIPC_FULL_SWEEP."""
    return list(items) if full_sweep() else list(items[offset::k])
