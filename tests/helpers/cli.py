"""`tipcgen ARGS` in-process, run from a given directory (a model repo's root)."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from tipcgen.cli import app

runner = CliRunner()


def invoke_in(root: Path, *args: str):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return runner.invoke(app, list(args))
    finally:
        os.chdir(cwd)
