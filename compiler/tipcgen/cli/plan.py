"""`tipcgen plan`: the steps a spec's suite or a legacy config runs in a mode."""

from __future__ import annotations

from typing import Optional

import typer

from tipcgen.cli.common import (
    DEVICE_OPT,
    GPUID_OPT,
    LAYOUT_OPT,
    RUNNER_OPT,
    SOURCE_ARG,
    SUITE_OPT,
    app,
    choice,
    echo,
    mode_option,
    plan_for,
)


@app.command()
def plan(
    source: str = SOURCE_ARG,
    mode: str = mode_option("lite_train_lite_infer"),
    suite: Optional[str] = SUITE_OPT,
    layout: Optional[str] = LAYOUT_OPT,
    runner: Optional[str] = RUNNER_OPT,
    gpuid: Optional[str] = GPUID_OPT,
    device: str = DEVICE_OPT,
    fmt: str = typer.Option("text", "--format", help="text or json"),
):
    """Print the steps a config runs in MODE (argv, CUDA_VISIBLE_DEVICES, log)."""
    choice("--format", fmt, ("text", "json"))
    result = plan_for(source, mode, suite, layout, gpuid, runner, device)
    if fmt == "json":
        echo(result.to_json(), json=True)
        return
    from tipcgen.errors import printable  # config text must not drive the terminal

    for step in result.steps:
        cvd = step.cuda_visible_devices
        env = f"CUDA_VISIBLE_DEVICES={cvd} " if cvd is not None else ""
        where = f"(in {step.cwd}/) " if step.cwd else ""
        argv = " ".join(step.argv or ("<unsplittable>",))
        echo(printable(f"[{step.index}] {step.kind:<6} {where}{env}{argv}"))
        if step.log:
            echo(printable(f"         log: {step.log}"))
        if step.timeout is not None or step.stall is not None:
            stall = f"; stalled after {step.stall} s without log output" if step.stall is not None else ""
            limit = f"{step.timeout} s" if step.timeout is not None else "tipcgen's default"
            echo(f"         limit: {limit}{stall} (the spec's limits)")
        if step.skip:
            echo(f"         skipped: {step.skip} (the status line says `Run skipped ({step.skip})`)")
    echo(printable(f"{len(result.steps)} steps; status lines -> {result.status_log}"))
