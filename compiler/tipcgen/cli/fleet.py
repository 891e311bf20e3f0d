"""CLI command `tipcgen fleet`: a multi-node suite on every node at once, over OpenSSH or as
Slurm job steps (`--via slurm`)."""

from __future__ import annotations

import os
import re
import shlex
import signal
from typing import TYPE_CHECKING, Optional

import typer

from tipcgen.cli.common import (
    LAYOUT_OPT,
    MAX_LIMIT,
    MAX_WAIT,
    RUNNER_OPT,
    SOURCE_ARG,
    SUITE_OPT,
    SUMMARY_OPT,
    app,
    echo,
    mode_option,
    rich_text,
    seconds,
)
from tipcgen.errors import UsageError, printable

if TYPE_CHECKING:
    from rich.table import Table

    from tipcgen.fleet.nodes import Fleet
    from tipcgen.fleet.run import FleetResult

DEFAULT_PORT = 6070  # paddle.distributed.launch's own default start port
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_STYLE = {
    "passed": "green",
    "failed": "bold red",
    "skipped": "yellow",
    "timed out": "bold magenta",
    "stopped": "magenta",
    "not run": "dim",
}


def _pairs(option: str, values: list[str], what: str) -> list[tuple[str, str]]:
    out = []
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            raise UsageError(f"{option} {value!r}: give {what}")
        out.append((key, rest))
    return out


def _env(values: list[str]) -> tuple:
    from tipcgen.fleet.run import RESERVED_ENV

    pairs = _pairs("--env", values, "NAME=VALUE")
    for key, _ in pairs:
        if not _NAME.match(key):
            raise UsageError(f"--env {key}=...: {key!r} is not an environment variable name")
        if key in RESERVED_ENV:
            raise UsageError(f"--env {key}=...: tipcgen fleet sets {key} itself (see --start-port, --step-timeout)")
    return tuple(pairs)


def _port(option: str, value: Optional[int]) -> Optional[int]:
    if value is not None and not 1 <= value <= 65535:
        raise UsageError(f"{option} must be a TCP port (1-65535), not {value}")
    return value


def _directory(what: str, value: str) -> str:
    """A node's working copy: any path (spaces too: it is quoted for the node's shell), but not
    empty (`cd ''` stays in the home directory) and without control characters."""
    if not value or any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise UsageError(f"{what}: give a directory on the nodes (not empty, no control characters), not {value!r}")
    return value


def _local_file(option: str, value: Optional[str]) -> Optional[str]:
    """--ssh-config / --identity: a regular file here (ssh would block on a FIFO, or fail late)."""
    if value is not None and not os.path.isfile(value):
        raise UsageError(f"{option} {value}: error: no such file (a regular file on this machine)")
    return value


def _whole_seconds(option: str, value: Optional[float]) -> Optional[int]:
    """Seconds for the nodes' bash, which takes whole seconds written as digits."""
    if value is None:
        return None
    seconds(option, value, most=MAX_LIMIT)
    if value != int(value):
        raise UsageError(f"{option} must be whole seconds (the nodes' bash counts whole seconds), not {value:g}")
    return int(value)


def _grid(setup: Fleet, result: FleetResult) -> Table:
    """Node x step: one row per step, a column per node."""
    from rich.table import Table

    table = Table(title=rich_text(f"{setup.plan.model_name} {setup.mode} on {len(setup.nodes)} nodes"))
    table.add_column("step", justify="right")
    table.add_column("kind")
    table.add_column("run", overflow="fold")
    for node in result.nodes:
        table.add_column(rich_text(node.ip), overflow="fold")
    for i, step in enumerate(setup.plan.steps):
        cells = []
        for node in result.nodes:
            s = node.steps[i]
            cells.append(f"[{_STYLE.get(s.status, '')}]{rich_text(s.status)}[/]")
        table.add_row(str(step.index + 1), rich_text(step.kind), rich_text(step.group), *cells)
    return table


def _dry_run(setup: Fleet, settings) -> None:
    from tipcgen.fleet.run import planned_commands

    for node, cmds in planned_commands(setup, settings):
        echo(f"# node {node.ip} (working copy {node.dir})")
        for what, argv in cmds:
            echo(f"# {what}")
            echo(shlex.join(argv))
        echo("")


def _print_result(setup: Fleet, result: FleetResult, reports: tuple) -> None:
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    console.print(_grid(setup, result))
    for node in result.nodes:
        step = node.failed_step
        where = f" at step {step.index + 1} {step.kind} {step.group}" if step else ""
        reason = node.reason or ""
        if not where and reason.startswith(f"{node.state}: "):  # "stopped: stopped: interrupted"
            reason = reason[len(node.state) + 2 :]
        verdict = f"node {node.ip}: {node.state}{where}" + (f": {reason}" if reason else "")
        echo(printable(verdict))
        if node.gather_problem:
            echo(f"tipc fleet: gathering logs: {printable(node.gather_problem)}", err=True)
    if result.reason:
        echo(f"tipc fleet: stopped every node: {printable(result.reason)}")
    echo(f"logs of each node in {os.path.join(setup.plan.log_dir, 'nodes')}/<ip>/; reports {' and '.join(reports)}")


@app.command()
def fleet(
    source: str = SOURCE_ARG,
    mode: str = mode_option(),
    suite: Optional[str] = SUITE_OPT,
    layout: Optional[str] = LAYOUT_OPT,
    runner: Optional[str] = RUNNER_OPT,
    prepare: bool = typer.Option(False, "--prepare", help="Run test_tipc/prepare.sh on every node first."),
    sync: bool = typer.Option(
        False, "--sync", help="Copy this machine's config and suite files (ssh + tar) to nodes where they differ."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the ssh commands per node; connect to none."),
    ssh_config: Optional[str] = typer.Option(None, "--ssh-config", help="ssh config file (ssh -F)."),
    identity: Optional[str] = typer.Option(None, "--identity", help="Private key file (ssh -i)."),
    user: Optional[str] = typer.Option(None, "--user", help="Login name on the nodes (default: the ssh config's)."),
    ssh_port: Optional[int] = typer.Option(
        None, "--ssh-port", help="sshd port on the nodes (default: the ssh config's)."
    ),
    ssh_option: list[str] = typer.Option([], "--ssh-option", help="An ssh -o KEY=VALUE option (repeatable)."),
    connect_timeout: float = typer.Option(
        10.0, "--connect-timeout", help="Seconds to reach a node (ssh ConnectTimeout); the checks are bounded by it."
    ),
    remote_dir: Optional[str] = typer.Option(
        None,
        "--remote-dir",
        help="Working copy of the model repo on the nodes (default: this repo root's path); {node}: the node's name.",
    ),
    node_dir: list[str] = typer.Option([], "--node-dir", help="IP=DIR: one node's working copy (repeatable)."),
    start_port: int = typer.Option(
        DEFAULT_PORT,
        "--start-port",
        help="The launcher's first port on every node (exported as FLAGS_START_PORT and PADDLE_START_PORT).",
    ),
    via: str = typer.Option("ssh", "--via", help="How to reach the nodes: ssh (gpu_list's hosts) or slurm."),
    nodes: Optional[int] = typer.Option(
        None,
        "--nodes",
        help="slurm: run on N nodes (default: as many as gpu_list names); allocated unless run inside an allocation.",
    ),
    partition: Optional[str] = typer.Option(None, "--partition", help="slurm: the partition to allocate in."),
    time_limit: Optional[str] = typer.Option(
        None, "--time", help="slurm: the allocation's time limit (salloc --time)."
    ),
    alloc_timeout: float = typer.Option(
        300.0, "--alloc-timeout", help="slurm: seconds the allocation may take to start before giving up."
    ),
    job: Optional[str] = typer.Option(
        None, "--job", help="slurm: run inside this allocation (default: $SLURM_JOB_ID when set, else allocate)."
    ),
    emit_sbatch: Optional[str] = typer.Option(
        None, "--emit-sbatch", help="slurm: write a batch script doing the same run (for sbatch) and exit."
    ),
    step_timeout: Optional[float] = typer.Option(
        None, "--step-timeout", help="TIPC_STEP_TIMEOUT on the nodes: seconds a step of the bash may run."
    ),
    run_timeout: float = typer.Option(
        86400.0, "--run-timeout", help="Seconds the whole run may take on the nodes before all are stopped."
    ),
    kill_grace: float = typer.Option(
        10.0, "--kill-grace", help="Seconds between SIGTERM and SIGKILL when stopping a node's run."
    ),
    env: list[str] = typer.Option([], "--env", help="NAME=VALUE exported on every node (repeatable)."),
    json_out: Optional[str] = typer.Option(None, "--json", help="JSON report (default: <log dir>/nodes/fleet.json)."),
    junit: Optional[str] = typer.Option(
        None, "--junit", help="JUnit XML report, a testsuite per node (default: <log dir>/nodes/fleet.junit.xml)."
    ),
    summary_out: Optional[str] = SUMMARY_OPT,
):
    """Run a multi-node suite on every node at once over ssh or Slurm, then gather every node's logs.

    Checks first that every node answers, holds the same config (sha256), has paddle for the
    config's interpreter, its own address in gpu_list and a free start port; exports
    TIPC_NODE_IP, FLAGS_START_PORT and PADDLE_START_PORT per node; stops every node when one
    fails. With --via slurm the nodes come from the allocation and a run copy of the config
    names their addresses. Exit 0 when every step passed or was skipped on every node, 1
    otherwise (also when refused before starting: then nothing ran), 2 on bad input.
    """
    from tipcgen.fleet.nodes import fleet_for
    from tipcgen.fleet.run import Settings
    from tipcgen.fleet.ssh import SshOptions

    _on_signals()
    seconds("--connect-timeout", connect_timeout, most=MAX_WAIT)
    seconds("--run-timeout", run_timeout, most=MAX_LIMIT)
    seconds("--kill-grace", kill_grace, zero=True, most=MAX_WAIT)
    step = _whole_seconds("--step-timeout", step_timeout)
    node_dirs = {ip: _directory(f"--node-dir {ip}=DIR", d) for ip, d in _pairs("--node-dir", node_dir, "IP=DIR")}
    opts = SshOptions(
        config=_local_file("--ssh-config", ssh_config),
        identity=_local_file("--identity", identity),
        user=user,
        port=_port("--ssh-port", ssh_port),
        options=tuple(f"{k}={v}" for k, v in _pairs("--ssh-option", ssh_option, "KEY=VALUE")),
        connect_timeout=connect_timeout,
    )
    settings = Settings(opts, prepare, sync, step, run_timeout, kill_grace, _env(env))
    if via not in ("ssh", "slurm"):
        raise UsageError(f"--via {via!r}: give ssh or slurm")
    if via == "slurm" or emit_sbatch is not None:
        from tipcgen.fleet.slurm import SlurmOptions

        ssh_only = [
            o
            for o, v in (
                ("--node-dir", node_dir),
                ("--ssh-config", ssh_config),
                ("--identity", identity),
                ("--user", user),
                ("--ssh-port", ssh_port),
                ("--ssh-option", ssh_option),
            )
            if v
        ]
        if ssh_only:
            raise UsageError(f"{ssh_only[0]} is an option of the ssh engine; --via slurm reaches the nodes with srun")
        if nodes is not None and not 2 <= nodes <= 10_000:
            raise UsageError(f"--nodes must be a node count from 2, not {nodes}")
        seconds("--alloc-timeout", alloc_timeout, most=MAX_LIMIT)
        if job is not None and not (job.isascii() and job.isdigit()):
            raise UsageError(f"--job {job!r}: give the allocation's job id (a number, as squeue shows it)")
        sopts = SlurmOptions(
            nodes, _slurm_word("--partition", partition), _slurm_word("--time", time_limit), alloc_timeout,
            connect_timeout, _slurm_word("--job", job),
        )  # fmt: skip
        kwargs = dict(
            suite=suite, layout=layout, runner=runner, start_port=_port("--start-port", start_port) or DEFAULT_PORT,
            remote_dir=None if remote_dir is None else _directory("--remote-dir", remote_dir), prepare=prepare,
        )  # fmt: skip
        if emit_sbatch is not None:
            _emit_sbatch(emit_sbatch, source, mode, sopts, settings, kwargs)
            return
        _run_slurm(source, mode, sopts, settings, kwargs, dry_run, (json_out, junit, summary_out))
        return
    for option, value in (("--nodes", nodes), ("--partition", partition), ("--time", time_limit), ("--job", job)):
        if value is not None:
            raise UsageError(f"{option} is an option of the slurm engine (--via slurm)")
    setup = fleet_for(
        source,
        mode,
        suite=suite,
        layout=layout,
        runner=runner,
        root=os.getcwd(),
        start_port=_port("--start-port", start_port) or DEFAULT_PORT,
        remote_dir=None if remote_dir is None else _directory("--remote-dir", remote_dir),
        node_dirs=node_dirs,
        prepare=prepare,
    )
    if dry_run:
        _dry_run(setup, settings)
        return
    _run(setup, settings, json_out, junit, summary_out)


_WORD = re.compile(r"[A-Za-z0-9_.:,+-]{1,200}\Z")


def _slurm_word(option: str, value: Optional[str]) -> Optional[str]:
    """A partition, time limit or job id handed to Slurm's clients: one plain word."""
    if value is not None and (not _WORD.match(value) or value.startswith("-")):
        raise UsageError(f"{option} {value!r}: give one word of letters, digits and _.:,+- (as Slurm spells it)")
    return value


def _suite_nodes(source: str, mode: str, kwargs: dict) -> int:
    """How many nodes the suite's multi-node gpu_list entries name (UsageError: none)."""
    from tipcgen.check.source import plan_source
    from tipcgen.fleet.nodes import suite_nodes

    plan = plan_source(source, mode, suite=kwargs["suite"], layout=kwargs["layout"], runner=kwargs["runner"],
                       root=os.getcwd())  # fmt: skip
    return len(suite_nodes(plan, source))


def _run_slurm(source: str, mode: str, sopts, settings, kwargs: dict, dry_run: bool, outs: tuple) -> None:
    """The allocation (ours or the one we run in), its nodes' addresses, the run copy, the run;
    an allocation we asked for is released whatever happens."""
    from tipcgen.fleet import slurm
    from tipcgen.fleet.session import Stop

    count = sopts.nodes or _suite_nodes(source, mode, kwargs)
    if dry_run:
        echo(f"# allocate (unless run inside one): {shlex.join(slurm.salloc_argv(sopts, count))}")
        echo("# then per node, as a job step: srun --jobid=JOB --nodes=1 --ntasks=1 --nodelist=NODE --overlap ...")
        echo("# (tipcgen fleet --emit-sbatch FILE writes the whole run as a batch script to review)")
        return
    try:
        slurm.check_clients()
        _in_allocation(source, mode, sopts, settings, kwargs, outs)
    except slurm.SlurmRefused as exc:
        _slurm_refused_record(source, mode, kwargs, outs, str(exc))
        raise
    except (KeyboardInterrupt, Stop) as exc:  # before the run started (or after it): released
        why = exc.reason if isinstance(exc, Stop) else "interrupted"
        echo(f"tipc fleet: {why} (no run was going on any node)", err=True)
        raise typer.Exit(1) from None


def _in_allocation(source: str, mode: str, sopts, settings, kwargs: dict, outs: tuple) -> None:
    from dataclasses import replace

    from tipcgen.fleet import slurm
    from tipcgen.fleet.nodes import fleet_for

    count = sopts.nodes or _suite_nodes(source, mode, kwargs)
    bound = sopts.connect_timeout + 20
    alloc = slurm.current(os.environ, bound, sopts.job) or slurm.allocate(sopts, count)
    try:
        if len(alloc.nodes) < count:
            raise slurm.SlurmRefused(
                f"tipc fleet: slurm: job {alloc.job} has {len(alloc.nodes)} node(s) ({', '.join(alloc.nodes)}); "
                f"the run needs {count}: allocate at least {count} (salloc --nodes={count}) or pass --nodes"
            )
        names = alloc.nodes[:count]
        ips = slurm.node_addresses(alloc, names, sopts.connect_timeout)
        echo(printable(f"tipc fleet: {slurm.describe(alloc, names, ips)}"))
        setup = fleet_for(source, mode, root=os.getcwd(), gpu_ips=ips, node_names=dict(zip(ips, names)), **kwargs)
        transport = slurm.SlurmTransport(alloc.job, tuple(zip(ips, names)), sopts.connect_timeout)
        _run(setup, replace(settings, transport=transport), *outs)
    finally:
        problem = slurm.release(alloc)
        if problem:
            echo(f"tipc fleet: releasing the allocation: {printable(problem)}", err=True)


def _emit_sbatch(path: str, source: str, mode: str, sopts, settings, kwargs: dict) -> None:
    from tipcgen.fleet.sbatch import sbatch_script
    from tipcgen.fsio import write_atomic

    count = sopts.nodes or _suite_nodes(source, mode, kwargs)
    text = sbatch_script(source, mode, count, sopts, settings, kwargs, os.getcwd())
    if os.path.isdir(path):
        raise UsageError(f"--emit-sbatch {path!r}: error: give a file name for the batch script, not a directory")
    if os.path.islink(path):
        os.unlink(path)
    write_atomic(path, text.encode())
    echo(f"wrote {path}: review it, then `sbatch {shlex.quote(path)}`")


def _run(setup: Fleet, settings, json_out: Optional[str], junit: Optional[str], summary_out: Optional[str]) -> None:
    from tipcgen.fleet.run import run_fleet
    from tipcgen.fleet.session import Printer, Stop

    json_out, junit = _report_paths(setup, json_out, junit, summary_out)
    try:
        result = run_fleet(setup, settings, Printer())
    except (KeyboardInterrupt, Stop) as exc:  # before or after the nodes ran: nothing runs there
        why = exc.reason if isinstance(exc, Stop) else "interrupted"
        echo(f"tipc fleet: {why} (no run was going on any node)", err=True)
        raise typer.Exit(1) from None
    transport = settings.transport
    engine: dict = {"name": transport.name}
    if transport.name == "slurm":  # the job and each node's Slurm name
        engine.update(job=transport.job, nodes=dict(transport.names))
    _write_records(setup, result, engine, (json_out, junit, summary_out))
    if result.refused:
        for problem in result.refused:  # a node's own words (its stderr) among them: escaped
            echo(f"tipc fleet: {printable(problem)}", err=True)
        echo("tipc fleet: refused to start; nothing was started on any node", err=True)
        echo(f"tipc fleet: reports {json_out} and {junit}", err=True)
        raise typer.Exit(1)
    _print_result(setup, result, (json_out, junit))
    unstopped = [n for n in result.nodes if n.stop_problem]
    for n in unstopped:  # a stop that failed is an error of its own, never a quiet "stopped"
        echo(f"tipc fleet: error: could not stop the run on {printable(n.stop_problem)}", err=True)
    raise typer.Exit(result.exit_code)


def _report_paths(setup: Fleet, json_out: Optional[str], junit: Optional[str], summary_out: Optional[str]) -> tuple:
    from tipcgen.fleet.run import local_dirs
    from tipcgen.run.reports import check_report_path

    local_dirs(setup)  # `nodes/` a link is refused before a report is made in it
    base = os.path.join(setup.plan.log_dir, "nodes")
    json_out = json_out or os.path.join(base, "fleet.json")
    junit = junit or os.path.join(base, "fleet.junit.xml")
    check_report_path("--json", json_out)
    check_report_path("--junit", junit)
    check_report_path("--summary", summary_out)
    return json_out, junit


def _write_records(setup: Fleet, result: FleetResult, engine: dict, outs: tuple) -> None:
    """Every run leaves its record, a refused one too; each report replaces the last atomically."""
    from tipcgen.fleet.report import json_report, junit_report, report_data
    from tipcgen.run.reports import write_report

    json_out, junit, summary_out = outs
    args = (setup, result.nodes, result.reason, result.exit_code, engine, result.refused)
    write_report(json_out, json_report(*args))
    if summary_out or os.environ.get("GITHUB_STEP_SUMMARY"):
        from tipcgen.results.summary import fleet_summary, write_summary

        where = os.path.dirname(os.path.abspath(summary_out)) if summary_out else "."
        write_summary(summary_out, fleet_summary(report_data(*args), ".", where))
    write_report(junit, junit_report(setup, result.nodes))


def _slurm_refused_record(source: str, mode: str, kwargs: dict, outs: tuple, why: str) -> None:
    """Slurm gave no nodes (no allocation, too few, no addresses): the record says `refused`,
    for the nodes the config names (Slurm's are unknown). None when the suite cannot be planned
    without them (its own error was said already)."""
    from tipcgen.errors import TipcError
    from tipcgen.fleet.nodes import fleet_for
    from tipcgen.fleet.run import FleetResult, refused_outcomes

    try:
        setup = fleet_for(source, mode, root=os.getcwd(), **kwargs)
        json_out, junit = _report_paths(setup, *outs)
        result = FleetResult(1, [why], refused_outcomes(setup, [why]), None)
        _write_records(setup, result, {"name": "slurm"}, (json_out, junit, outs[2]))
    except TipcError as exc:
        echo(f"tipc fleet: no record of this refusal: {printable(str(exc))}", err=True)


def _raise_stop(signum: int, _frame) -> None:
    from tipcgen.fleet.session import ask_stop

    ask_stop("interrupted" if signum == signal.SIGINT else f"terminated ({signal.Signals(signum).name})")


def _on_signals() -> None:
    """Ctrl-C, SIGTERM and SIGHUP stop every node (raised in the main thread, and kept where the
    run's watch loop reads it: session.ask_stop)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_stop)
