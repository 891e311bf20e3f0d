"""`tipcgen ARGS` from a given directory (a model repo's root): in a fresh process (warm-started,
`helpers.warm`), in a real exec (`TIPCGEN`), or in-process (`invoke_in`)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from helpers.machine import bound
from helpers.warm import WARM
from tipcgen.cli import app

runner = CliRunner()

# A real exec of the CLI, for what a forked child does not show: a test's own child process
# (signals, process groups, resource limits), a fresh hash seed, the interpreter's own start.
TIPCGEN = [sys.executable, "-c", "import sys; sys.argv[0] = 'tipcgen'; from tipcgen.cli import main; main()"]


def run_cli(
    *args, cwd: Path, env: dict | None = None, timeout: float = 10, input: str | None = None
) -> subprocess.CompletedProcess:
    """`tipcgen ARGS` in a fresh process (as CI runs it on a pull request's input), its output
    captured as text, standard input `input` or none; warm-started (`helpers.warm`)."""
    # a hang guard: stretched on a loaded machine
    return WARM.run(list(map(str, args)), cwd=cwd, env=env, timeout=bound(timeout), input=input)


def exec_cli(
    *args, cwd: Path, env: dict | None = None, timeout: float = 10, input: str | None = None
) -> subprocess.CompletedProcess:
    """`tipcgen ARGS` as a real exec of a new interpreter (see TIPCGEN)."""
    return subprocess.run(
        [*TIPCGEN, *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=bound(timeout),
        input=input,
        stdin=None if input is not None else subprocess.DEVNULL,
    )


def invoke_in(root: Path, *args: str):
    cwd = os.getcwd()
    os.chdir(root)
    try:
        return runner.invoke(app, list(args))
    finally:
        os.chdir(cwd)


def run_argv(
    args: list,
    *,
    cwd: Path | str | None = None,
    env: dict | None = None,
    timeout: float = 600,
    check: bool = False,
    input: str | None = None,
    capture_output: bool = True,
    text: bool = True,
    stdin: int | None = None,
) -> subprocess.CompletedProcess:
    """`subprocess.run([*TIPCGEN, *args], capture_output=True, text=True, ...)`, warm-started: the
    same call shape, for tests that spell out the subprocess call."""
    assert capture_output and text and stdin in (None, subprocess.DEVNULL), "warm calls capture text"
    proc = WARM.run(list(map(str, args)), cwd=cwd or os.getcwd(), env=env, timeout=bound(timeout), input=input)
    if check:
        proc.check_returncode()
    return proc
