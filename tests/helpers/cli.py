"""`tipcgen ARGS` in-process, run from a given directory (a model repo's root)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from helpers.machine import bound
from tipcgen.cli import app

runner = CliRunner()


def run_cli(*args, cwd: Path, env: dict | None = None, timeout: float = 10) -> subprocess.CompletedProcess:
    """`python -m tipcgen.cli ARGS` in a fresh process (as CI runs it on a pull request's input),
    its output captured as text, no standard input."""
    return subprocess.run(
        [sys.executable, "-m", "tipcgen.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=bound(timeout),  # a hang guard: stretched on a loaded machine
        stdin=subprocess.DEVNULL,
    )


def invoke_in(root: Path, *args: str):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return runner.invoke(app, list(args))
    finally:
        os.chdir(cwd)
