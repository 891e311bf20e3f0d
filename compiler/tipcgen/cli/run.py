"""CLI command `tipcgen run`: execute a Plan (registered on the main app)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable, Optional

import typer

from tipcgen.cli.common import (
    DEVICE_OPT,
    GPUID_OPT,
    LAYOUT_OPT,
    MAX_WAIT,
    RUNNER_OPT,
    SOURCE_ARG,
    SUITE_OPT,
    SUMMARY_OPT,
    app,
    echo,
    mode_option,
    plan_for,
    rich_text,
    seconds,
    step_shell,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from tipcgen.plan.steps import Plan, Step
    from tipcgen.run.executor import StepResult


def _short(log: Optional[str], prefix: str) -> str:
    if not log:
        return "(terminal)"
    return log[len(prefix) :] if log.startswith(prefix) else log


_STYLE = {
    "passed": "green",
    "failed": "bold red",
    "skipped": "yellow",
    "timed out": "bold magenta",
    "stalled": "bold magenta",
}


def _text(text: str, lines: bool = False) -> str:
    """Text for the console: the terminal's escaper, then rich markup escaped (cli.common.rich_text)."""
    return rich_text(text, lines)


def _end_line(tag: str, result: StepResult) -> str:
    """The console line for a step that ran or was skipped (rich markup)."""
    escape = _text
    style = _STYLE[result.status]
    line = f"[bold]{escape(tag)}[/] "
    if result.status in ("timed out", "stalled"):  # the reason says it: "timed out after S s (limit from X)"
        return line + f"[{style}]{escape(result.reason or result.status)}[/]"
    line += f"[{style}]{result.status}[/]"
    if result.status != "skipped":
        line += f" ({result.seconds:.1f} s)"
    if result.reason:
        line += f": {escape(result.reason)}"
    return line


def doctor_hint(source: str, suite: Optional[str]) -> str:
    """What to run when a multi-node train step failed: the preflight on every node."""
    where = f"{source} --suite {suite}" if suite else source
    return (
        f'tipc: hint: a multi-node train step failed; run "tipcgen doctor {where}" on every node '
        "(this node's address, FLAGS_START_PORT, the peers, the interpreter)"
    )


def _print_stalled(console: Console, step: Step) -> None:
    """A stalled step: the last lines of each worker log, and how to find where it hangs."""
    import os

    from tipcgen.inputs import read_log
    from tipcgen.run.reports import log_tail
    from tipcgen.run.watch import STALL_HINTS, worker_logs

    escape = _text

    for path in worker_logs(os.path.join(".", step.cwd) if step.cwd else "."):
        data = read_log(path, ".", 1 << 16)  # the repo's tree: a worker log linked out reads as empty
        tail = log_tail((data or b"").decode("utf-8", "replace"), lines=10)
        console.print(f"[dim]--- last lines of {escape(os.path.relpath(path))}:[/]")
        console.print(escape(tail, lines=True) if tail else "(empty)", style="dim")
    for hint in STALL_HINTS:
        console.print(f"tipc: hint: {escape(hint)}")


def _event_printer(console: Console, plan: Plan, hint: str = "") -> Callable:
    """run_plan's on_event: a line when a step starts and ends, a failed step's log tail (and
    worker logs when it stalled), `hint` when a multi-node train step failed."""
    from tipcgen.run.reports import log_tail, read_log

    escape = _text

    total = len(plan.steps)
    width = len(str(total))

    def on_event(kind: str, step: Step, result: Optional[StepResult]) -> None:
        tag = f"[{step.index + 1:>{width}}/{total}] {step.kind:<6}"
        if kind == "start":
            where = f" > {step.log}" if step.log else ""
            console.print(
                f"[bold]{escape(tag)}[/] {escape(' '.join(step.argv or (step.command,)))}[dim]{escape(where)}[/]"
            )
            sys.stdout.flush()
            return
        if result is None:  # only "start" comes without a result
            return
        console.print(_end_line(tag, result))
        if result.counts_as_failed and step.log:
            tail = log_tail(read_log(".", step.log), lines=20)
            if tail:
                console.print(f"[dim]--- last lines of {escape(step.log)}:[/]")
                console.print(_text(tail, lines=True), style="dim")
        if result.status == "stalled":
            _print_stalled(console, step)
        if result.counts_as_failed and step.kind == "train" and step.nodes > 1 and hint:
            console.print(escape(hint))

    return on_event


def _results_table(plan: Plan, results: list[StepResult]) -> Table:
    """The summary table: one row per step."""
    from rich.table import Table

    escape = _text
    table = Table(title=escape(f"{plan.model_name} {plan.mode}"), caption=escape(f"logs in {plan.log_dir}/"))
    prefix = plan.log_dir.rstrip("/") + "/"
    for col in ("step", "kind", "status", "seconds", "log"):
        table.add_column(col, justify="right" if col in ("step", "seconds") else "left", overflow="fold")
    for r in results:
        table.add_row(
            str(r.step.index + 1),  # numbered from 1, as the progress lines `[1/N]` are
            escape(r.step.kind),
            f"[{_STYLE[r.status]}]{r.status}[/]",
            "" if r.status == "skipped" else f"{r.seconds:.1f}",
            escape(_short(r.step.log, prefix)),
        )
    return table


@app.command()
def run(
    source: str = SOURCE_ARG,
    mode: str = mode_option(),
    suite: Optional[str] = SUITE_OPT,
    layout: Optional[str] = LAYOUT_OPT,
    runner: Optional[str] = RUNNER_OPT,
    gpuid: Optional[str] = GPUID_OPT,
    device: str = DEVICE_OPT,
    dry_run: bool = typer.Option(False, "--dry-run", help="Print each step's command; run and write nothing."),
    step_timeout: Optional[float] = typer.Option(
        None,
        "--step-timeout",
        help="Seconds every step may run before its process group is killed (the step then counts as failed); "
        "overrides TIPC_STEP_TIMEOUT and the spec's limits (default: the step's limit from the spec, "
        "else 7200, or 3 days for a whole_train_whole_infer training).",
    ),
    stall_timeout: Optional[float] = typer.Option(
        None,
        "--stall-timeout",
        help="Stop a train step whose logs (its log, log/workerlog.*) have not grown for this many seconds "
        "and report it stalled; overrides TIPC_STALL_TIMEOUT and the spec's limits.stall (0: off; default: off).",
    ),
    kill_grace: float = typer.Option(
        10.0, "--kill-grace", help="Seconds between SIGTERM and SIGKILL when a step times out."
    ),
    junit: Optional[str] = typer.Option(None, "--junit", help="Write a JUnit XML report here."),
    json_out: Optional[str] = typer.Option(None, "--json", help="Write a JSON report here."),
    summary_out: Optional[str] = SUMMARY_OPT,
):
    """Run a config's steps from the model repo's root, like test_train_inference_python.sh.

    Same argv, CUDA_VISIBLE_DEVICES, log files and status lines as the generated bash; a step
    whose training failed is skipped; exit 1 when any step failed or timed out.
    """
    if step_timeout is not None:
        seconds("--step-timeout", step_timeout)
    if stall_timeout is not None:
        seconds("--stall-timeout", stall_timeout, zero=True)
    seconds("--kill-grace", kill_grace, zero=True, most=MAX_WAIT)
    plan = plan_for(source, mode, suite, layout, gpuid, runner, device)
    from tipcgen.check.source import what_ran

    ran = what_ran(source, suite)
    if dry_run:  # each word shell-quoted: a pasted line runs nothing a config value holds
        for step in plan.steps:
            echo(step_shell(step))
        return

    from rich.console import Console

    from tipcgen.errors import printable
    from tipcgen.run.executor import run_plan, summarize
    from tipcgen.run.reports import check_report_path, json_report, junit_report, write_report

    check_report_path("--json", json_out)  # before a long run, not after it
    check_report_path("--junit", junit)
    check_report_path("--summary", summary_out)

    console = Console(highlight=False, soft_wrap=True)
    try:
        results = run_plan(
            plan,
            timeout=step_timeout,
            stall=stall_timeout,
            grace=kill_grace,
            on_event=_event_printer(console, plan, doctor_hint(source, suite)),
        )
    except KeyboardInterrupt:
        echo("tipc: interrupted; the running step's process group was stopped", err=True)
        raise typer.Exit(130) from None
    except OSError as exc:  # the log directory or the status log cannot be written
        from tipcgen.fsio import path_error

        if exc.filename is None:
            raise
        raise path_error(exc, "write the run's logs") from None

    console.print(_results_table(plan, results))
    summary = summarize(results)
    echo(printable(summary.sentence(plan.status_log)))
    if json_out:
        write_report(json_out, json_report(plan, results, source=source, ran=ran))
    if summary_out or os.environ.get("GITHUB_STEP_SUMMARY"):
        from tipcgen.results.summary import run_summary, write_summary
        from tipcgen.run.reports import report_data

        where = os.path.dirname(os.path.abspath(summary_out)) if summary_out else "."
        write_summary(summary_out, run_summary(report_data(plan, results, source=source, ran=ran), ".", where))
    if junit:
        write_report(junit, junit_report(plan, results))
    raise typer.Exit(summary.exit_code)
