"""Tests that need a tool outside Python (sshd, Slurm, shellcheck, namespaces): skipped saying
why, except where TIPC_REQUIRE_TOOLS is set (CI), where a missing tool fails the test."""

from __future__ import annotations

import os

import pytest


def require(why: str) -> None:
    """Nothing when `why` is empty; else skip (or, with TIPC_REQUIRE_TOOLS, fail) saying why."""
    if why:
        if os.environ.get("TIPC_REQUIRE_TOOLS"):
            pytest.fail(f"TIPC_REQUIRE_TOOLS is set but {why}")
        pytest.skip(why)
