"""How much slower this machine is right now than an idle one: the tests' time bounds that guard
against a hang (not speed targets: those are in benchmarks/) are stretched by it, so a loaded
machine makes a run slower instead of failing it, while a real hang still fails."""

from __future__ import annotations

import os


def slowness() -> float:
    """The 1-minute load average per CPU this process may use, at least 1: six busy processes on
    two CPUs give each about a third of one, 3.0."""
    try:
        load = os.getloadavg()[0]
    except OSError:
        return 1.0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1.0, load / max(1, cpus))


def bound(seconds: float) -> float:
    """A hang guard of `seconds` on an idle machine, stretched by the machine's load now."""
    return seconds * slowness()
