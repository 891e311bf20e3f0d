"""CLI command `tipcgen doctor`: this node's preflight for a suite (registered on the main app)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Optional

import typer

from tipcgen.cli.common import MAX_WAIT, SOURCE_ARG, SUITE_OPT, app, echo, mode_option, plan_for, seconds
from tipcgen.errors import UsageError
from tipcgen.run.doctor import CHECK_NAMES, CONNECT_TIMEOUT, IMPORT_TIMEOUT, Target, Waits, exit_code, run_checks


def read_suite(source: str, mode: str, suite: Optional[str]) -> Target:
    """The Plan (as `tipcgen run` makes it from this environment) and the config's lines doctor reads."""
    from tipcgen.dialects import detect_text, get_layout
    from tipcgen.lower.configview import ConfigView

    plan = plan_for(source, mode, suite, None, None)  # also checks the mode, the suite, the config
    if not source.endswith((".yml", ".yaml")):
        from tipcgen.inputs import read_text

        if suite is not None:
            raise UsageError("--suite chooses a suite of a spec; a legacy CONFIG is one suite")
        from tipcgen.dialects.chains import chain_of_text

        text = read_text(source)
        view = ConfigView.parse(text, chain_of_text(text, source) or detect_text(text, source))
        return Target(source, mode, plan, view.value("python"), view.value("gpu_list"), text.encode(), source)

    from tipcgen.check.spec import load_spec, pick_suite
    from tipcgen.emit.files import config_files

    spec = load_spec(source)
    name = pick_suite(spec, suite, source)
    text = config_files(spec)[spec.config_path(spec.suites[name].file)]
    view = ConfigView.parse(text, get_layout(spec.suite_layout(name)))
    command = f"tipcgen prepare {source} --mode {mode}" + (f" --suite {suite}" if suite else "")
    return Target(
        f"{source} [suite {name}]", mode, plan, view.value("python"), view.value("gpu_list"), text.encode(),
        spec_path=source, prepare=spec.prepare_for(name, mode), prepare_command=command,
    )  # fmt: skip


@app.command()
def doctor(
    source: str = SOURCE_ARG,
    mode: str = mode_option("lite_train_lite_infer"),
    suite: Optional[str] = SUITE_OPT,
    connect_timeout: float = typer.Option(
        CONNECT_TIMEOUT, "--connect-timeout", help="Seconds to wait for each peer's answer (and the host name lookup)."
    ),
    import_timeout: float = typer.Option(
        IMPORT_TIMEOUT, "--import-timeout", help="Seconds the config's python may take to import paddle."
    ),
    skip: list[str] = typer.Option([], "--skip", help=f"Do not run this check ({', '.join(CHECK_NAMES)}); repeatable."),
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON instead of lines."),
):
    """Check this node before running a suite: address, ports, peers, paddle, devices, prepare, digests.

    Run it from the model repo's root on every node, with the environment the run will have
    (TIPC_NODE_IP, FLAGS_START_PORT, CUDA_VISIBLE_DEVICES). Exit 1 when a check failed.
    """
    seconds("--connect-timeout", connect_timeout, most=MAX_WAIT)
    seconds("--import-timeout", import_timeout, most=MAX_WAIT)
    unknown = [name for name in skip if name not in CHECK_NAMES]
    if unknown:
        raise UsageError(f"--skip {unknown[0]}: no such check; checks are {', '.join(CHECK_NAMES)}")
    read = read_suite(source, mode, suite)
    if read.config_path is not None:  # a spec's IPs were validated with it
        from tipcgen.fleet.nodes import check_names
        from tipcgen.run.doctor import plan_launches, suite_ips

        check_names(read.config_path, suite_ips(plan_launches(read.plan)))
    checks = run_checks(read, os.environ, Path.cwd(), Waits(connect_timeout, import_timeout), skip)
    code = exit_code(checks)
    if as_json:
        report = dict(source=read.label, mode=mode, exit_code=code, checks=[asdict(c) for c in checks])
        echo(json.dumps(report, indent=2, ensure_ascii=False), json=True)
    else:
        for check in checks:
            echo(check.line())
        counts = ", ".join(f"{sum(c.verdict == v for c in checks)} {v}" for v in ("ok", "warn", "fail", "skip"))
        echo(f"doctor: {counts} ({read.label}, {mode})")
    raise typer.Exit(code)
