"""CLI commands `tipcgen bench` (run the benchmark matrix or the convergence check) and
`tipcgen report` (speed-up table and plots from run records); registered on the main app."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Optional

import typer

from tipcgen.cli.common import (
    LANG_OPT,
    SOURCE_ARG,
    SUITE_OPT,
    SUMMARY_OPT,
    app,
    choice,
    echo,
    out_dir,
    rich_text,
    seconds,
)
from tipcgen.errors import UsageError

MAX_TRAIN_LOG = 256 << 20  # a benchmark run's training log read for its curve (its last 256 MiB)

if TYPE_CHECKING:
    from rich.console import Console

    from tipcgen.bench.matrix import BenchRun
    from tipcgen.bench.parse import TrainLog


def _load(source: str):
    from tipcgen.check.spec import load_spec

    if not source.endswith((".yml", ".yaml")):
        from tipcgen.bench.legacy_source import spec_of_config

        return spec_of_config(source)
    return load_spec(source)


def _run_one(run: BenchRun, root: str, console: Console, ran: Optional[dict] = None) -> tuple[dict, TrainLog]:
    """Run `run` under a progress bar; (its record, its parsed log)."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from tipcgen.bench.execute import execute
    from tipcgen.bench.parse import parse_train_log
    from tipcgen.bench.records import make_record

    total = run.max_epochs or 1
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("epoch {task.completed:.0f}/{task.total:.0f}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as bar:
        task = bar.add_task(run.run_id, total=total)

        def on_progress(done: int, of: int) -> None:
            bar.update(task, completed=done, total=of)

        outcome = execute(run, root, on_progress)
        if outcome.status == "passed":
            bar.update(task, completed=bar.tasks[0].total)
    from tipcgen.inputs import read_log

    # the whole log is parsed (its loss curve): bounded, read inside the run's own folder
    data = read_log(run.main_log, os.path.dirname(run.main_log) or ".", MAX_TRAIN_LOG)
    text = (data or b"").decode("utf-8", "replace")
    log = parse_train_log(text)
    return make_record(run, outcome, log, root=root, ran=ran), log


def _show_commands(runs: list[BenchRun]) -> None:
    import shlex

    for run in runs:
        echo(f"{run.run_id}:")
        for node in run.nodes:
            env = f"CUDA_VISIBLE_DEVICES={node.cuda_visible_devices} " if node.cuda_visible_devices else ""
            where = f"(cd {node.cwd} && " if node.cwd else ""
            echo(f"  {where}{env}{shlex.join(node.argv)}{')' if where else ''}")


def _summary(records: list[dict], console: Console) -> None:
    from rich.table import Table

    table = Table(title="tipcgen bench")
    for col in ("run", "status", "ips (samples/s)", "trainer samples/s", "step s", "final loss", "peak RSS MB"):
        # the run name wraps, never cut to `tiny_rec…`: in an 80-column CI log rows stay apart
        table.add_column(col, justify="left" if col in ("run", "status") else "right", overflow="fold")

    def num(v, f="{:.1f}"):
        return "-" if v is None else f.format(v)

    for r in records:
        table.add_row(
            rich_text(r["run_id"]),
            rich_text(r["status"]),
            num(r["ips"]),
            num(r["trainer_samples_per_s"]),
            num(r["step_time"], "{:.4f}"),
            num(r["convergence_value"], "{:.4f}"),
            num(r["peak_rss_mb"]),
        )
    console.print(table)


def _converge(spec, suite, out: str, root: str, python, timeout, console: Console) -> None:
    from tipcgen.bench.converge import judge
    from tipcgen.bench.matrix import convergence_run
    from tipcgen.bench.records import write_record

    run = convergence_run(spec, suite, out, python)
    if timeout is not None:
        run = _with_timeout(run, timeout)
    record, log = _run_one(run, root, console)
    verdict = judge(spec.convergence, log)
    record["convergence"] = verdict.to_json()
    path = write_record(record, out)
    for line in verdict.curve_lines():
        echo(line)
    if record["status"] != "passed":
        echo(f"convergence run {record['status']} (exit {record['returncodes']}); log: {run.main_log}", err=True)
    echo(verdict.message())
    echo(f"record: {path}")
    raise typer.Exit(0 if verdict.passed and record["status"] == "passed" else 1)


def _with_timeout(run: BenchRun, timeout: float) -> BenchRun:
    import dataclasses

    return dataclasses.replace(run, timeout=timeout)


@app.command()
def bench(
    source: str = SOURCE_ARG,
    suite: Optional[str] = SUITE_OPT,
    out: str = typer.Option("bench_results", "--out", "-o", help="Directory for the JSON records and run logs."),
    root: str = typer.Option(".", "--root", help="The model repo root the runs start in (default: here)."),
    python: Optional[str] = typer.Option(
        None, "--python", help="Interpreter for the train commands (default: the config's `python`)."
    ),
    converge: bool = typer.Option(
        False, "--converge", help="Run the spec's `convergence` check instead: PASS/FAIL, exit 1 on FAIL."
    ),
    timeout: Optional[float] = typer.Option(
        None, "--timeout", help="Seconds one run may take (default: the spec's `bench.timeout`)."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print each run's commands; run nothing."),
    summary_out: Optional[str] = SUMMARY_OPT,
):
    """Run the spec's benchmark matrix (run modes x batch sizes x precisions) for real.

    One JSON record per run in OUT (upstream benchmark fields: model_name, batch_size, fp_item,
    run_mode, device_num, ips, speed_unit, ...), with the loss curve and peak memory; exit 1
    when a run failed. --converge: train the `convergence` run and judge its curve.
    """
    out_dir("--out", out)
    if timeout is not None:
        seconds("--timeout", timeout)
    if not os.path.isdir(root):
        raise UsageError(f"--root {root}: no such directory")
    root = os.path.abspath(root)
    spec = _load(source)
    from rich.console import Console

    console = Console(highlight=False, soft_wrap=True)
    if converge:
        if dry_run:
            from tipcgen.bench.matrix import convergence_run

            _show_commands([convergence_run(spec, suite, out, python)])
            return
        _converge(spec, suite, out, root, python, timeout, console)
        return
    from tipcgen.bench.matrix import bench_matrix
    from tipcgen.bench.records import write_record

    runs = bench_matrix(spec, suite, out, python)
    from tipcgen.bench.matrix import bench_of
    from tipcgen.check.source import what_ran

    # the suite bench ran (`--suite`, else the bench section's; a legacy config is its own suite)
    ran = {**what_ran(source, None), "suite": bench_of(spec, suite)[1] if source.endswith((".yml", ".yaml")) else None}
    if dry_run:
        _show_commands(runs)
        return
    from tipcgen.run.reports import check_report_path

    check_report_path("--summary", summary_out)
    records = []
    for run in runs:
        if timeout is not None:
            run = _with_timeout(run, timeout)
        record, _ = _run_one(run, root, console, ran)
        records.append(record)
        path = write_record(record, out)
        if record["status"] != "passed":
            echo(f"{run.run_id}: {record['status']} (exit {record['returncodes']}); log: {run.main_log}", err=True)
        echo(f"record: {path}")
    _summary(records, console)
    if summary_out or os.environ.get("GITHUB_STEP_SUMMARY"):
        from tipcgen.results.summary import bench_summary, write_summary

        where = os.path.dirname(os.path.abspath(summary_out)) if summary_out else "."
        write_summary(summary_out, bench_summary(records, ".", where, out))  # logs lie below --out
    if any(r["status"] != "passed" for r in records):
        raise typer.Exit(1)


@app.command()
def report(
    records: list[str] = typer.Argument(..., help="Run records (JSON from `tipcgen bench`) or directories of them."),
    out: str = typer.Option("bench_report", "--out", "-o", help="Directory for the markdown report and the plots."),
    lang: str = LANG_OPT,
    no_plots: bool = typer.Option(False, "--no-plots", help="Write only the markdown (no matplotlib needed)."),
):
    """Speed-up table (baseline vs N processes/nodes: time, accuracy, speed-up, efficiency) as
    markdown, plus throughput-vs-processes (with the ideal line) and loss plots as PNG and SVG."""
    from tipcgen.bench.records import load_records
    from tipcgen.emit.bench_report import report_markdown, section
    from tipcgen.fsio import write_atomic

    choice("--lang", lang, ("zh", "en"))
    out_dir("--out", out)
    loaded = load_records(records)
    files: dict[str, bytes] = {}
    if not no_plots:
        from tipcgen.bench.plots import plot_files

        files = plot_files(loaded)
    md = f"report.{lang}.md"
    pngs = [name for name in files if name.endswith(".png")]
    files = {md: report_markdown(loaded, lang, pngs).encode("utf-8"), **files}
    paths = _report_destinations(out, list(files))  # everything rendered and checked before a write
    for name, data in files.items():
        write_atomic(paths[name], data)
    echo(section(loaded, lang), nl=False)
    echo("\nwrote " + ", ".join(paths.values()))


def _report_destinations(out: str, names: list[str]) -> dict[str, str]:
    """{name: OUT/name}, refusing a file there that is a symbolic link leading out of OUT, or
    is no regular file (writing would follow the link; comparing with a FIFO would block)."""
    import stat

    from tipcgen.errors import printable
    from tipcgen.fsio import PathError

    real_out = os.path.realpath(out)
    paths = {}
    for name in names:
        path = os.path.join(out, name)
        real = os.path.realpath(path)
        if not real.startswith(real_out.rstrip(os.sep) + os.sep):
            raise PathError(
                printable(f"{path}: error: leads to {real}, outside {out}/ (a symbolic link); refusing to write it")
            )
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            mode = stat.S_IFREG
        if not stat.S_ISREG(mode):
            raise PathError(printable(f"{path}: error: is not a regular file; refusing to write over it"))
        paths[name] = path
    return paths
