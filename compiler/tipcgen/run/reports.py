"""Reports of an executed Plan: JSON (everything, with parsed benchmarks) and JUnit XML (for CI)."""

from __future__ import annotations

import json
import os
import re
from typing import Optional

from tipcgen import __version__
from tipcgen.emit.junit import Case, Suite, junit_xml
from tipcgen.inputs import read_log as read_log_gate
from tipcgen.plan.steps import Plan
from tipcgen.run.autolog import parse_autolog
from tipcgen.run.executor import SKIPPED, STALLED, TIMED_OUT, StepResult, summarize

LOG_READ_BYTES = 1 << 20  # a report shows a log's tail: its last MiB is plenty
TAIL_LINES = 200
TAIL_BYTES = 64 * 1024
# Colour codes (logs carry them): removed from a tail; any other control character is escaped.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


MAX_LOG_BYTES = 4 << 20  # the end of a log a report reads: tails and AutoLog's block are at its end


def read_log(cwd: str, log: Optional[str], tree: Optional[str] = None) -> Optional[str]:
    """The text of a step's log (its last MAX_LOG_BYTES), or None when there is none to read.

    A record names the log, and a step can swap its log for a symbolic link: the log is read only
    when it is a regular file whose real path lies inside `tree` (default: `cwd`, the run's
    directory), through the read gate (tipcgen.inputs.read_log), so a report never copies another
    file of the machine (`~/.ssh/id_rsa`, /etc/shadow) into a summary or a JUnit file."""
    if not log or "\0" in log:
        return None
    data = read_log_gate(os.path.join(cwd, log), tree or cwd, MAX_LOG_BYTES)
    return None if data is None else data.decode("utf-8", "replace")


def log_inside(cwd: str, log: Optional[str], tree: Optional[str] = None) -> bool:
    """Whether a record's log path resolves (every link followed) inside `tree` (default `cwd`):
    only such a path is linked from a summary; any other is shown as text."""
    from tipcgen.errors import SpecError
    from tipcgen.inputs import resolve_inside

    if not log or "\0" in log:
        return False
    try:
        resolve_inside(os.path.join(cwd, log), tree or cwd)
    except (SpecError, OSError, ValueError):
        return False
    return True


def log_tail(text: Optional[str], lines: int = TAIL_LINES, limit: int = TAIL_BYTES) -> str:
    """The last `lines` lines (at most `limit` characters) of a log, colour codes removed (each
    medium escapes the rest: the terminal, the summary's markdown, the JUnit XML)."""
    if not text:
        return ""
    tail = "\n".join(text.splitlines()[-lines:])[-limit:]
    return _ANSI.sub("", tail)


def step_names(plan: Plan, result: StepResult) -> tuple[str, str]:
    """(classname, name) of a step's JUnit testcase."""
    step = result.step
    return f"{plan.model_name}.{plan.mode}", f"{step.index} {step.kind} {step.group}".rstrip()


def report_data(
    plan: Plan, results: list[StepResult], cwd: str = ".", source: Optional[str] = None, ran: Optional[dict] = None
) -> dict:
    """The JSON report as a dict (key order is fixed)."""
    s = summarize(results)
    steps = []
    for r in results:
        st = r.step
        bench = None
        if st.kind == "infer" and r.status != SKIPPED:
            text = read_log(cwd, st.log)
            bench = parse_autolog(text) if text else None
        steps.append(
            {
                "index": st.index,
                "kind": st.kind,
                "group": st.group,
                "nodes": st.nodes,
                "depends_on": st.depends_on,
                "argv": list(st.argv) if st.argv is not None else None,
                "command": st.command,
                "log": st.log,
                "cuda_visible_devices": st.cuda_visible_devices,
                "status": r.status,
                "returncode": r.returncode,
                "seconds": round(r.seconds, 3),
                "reason": r.reason,
                "limit": r.limit or None,
                "status_line": r.status_line,
                "benchmark": bench,
            }
        )
    from tipcgen.run.provenance import provenance

    return {
        "record": provenance("run", cwd, ran=ran),
        "tipcgen": __version__,
        "source": source,
        "layout": plan.layout,
        "mode": plan.mode,
        "model_name": plan.model_name,
        "log_dir": plan.log_dir,
        "status_log": plan.status_log,
        "summary": {
            "steps": len(results),
            "run": s.run,
            "passed": s.passed,
            "failed": s.failed,
            "skipped": s.skipped,
            "timed_out": s.timed_out,
            "exit_code": s.exit_code,
        },
        "steps": steps,
    }


def json_report(
    plan: Plan, results: list[StepResult], cwd: str = ".", source: Optional[str] = None, ran: Optional[dict] = None
) -> str:
    return json.dumps(report_data(plan, results, cwd, source, ran), indent=2, ensure_ascii=False) + "\n"


def junit_report(plan: Plan, results: list[StepResult], cwd: str = ".") -> str:
    """JUnit XML: one testsuite for the run, one testcase per step in plan order."""
    cases = []
    for r in results:
        classname, name = step_names(plan, r)
        outcome, message, kind = "passed", "", ""
        if r.status == SKIPPED:
            outcome, message = "skipped", r.reason or "skipped"
        elif r.counts_as_failed:
            outcome, kind = "failed", r.status.replace(" ", "_")
            if r.status in (TIMED_OUT, STALLED):
                message = r.reason or r.status
            elif r.returncode is None:
                message = r.reason or "failed"
            else:
                message = f"exit status {r.returncode}" + (f": {r.reason}" if r.reason else "")
        tail = log_tail(read_log(cwd, r.step.log))
        cases.append(Case(classname, name, outcome, message, kind, r.step.command, tail, r.seconds))
    props = (
        ("layout", plan.layout),
        ("mode", plan.mode),
        ("model_name", plan.model_name),
        ("status_log", plan.status_log),
    )
    seconds = sum(r.seconds for r in results)
    return junit_xml("tipcgen", [Suite(f"{plan.model_name}.{plan.mode}", seconds, props, cases)], seconds)


def check_report_path(option: str, path: Optional[str]) -> None:
    """Fail now (UsageError / PathError) when a report could not be written to `path` later:
    its directory is made, and the file is opened for appending (and removed if it is new)."""
    from tipcgen.errors import UsageError
    from tipcgen.fsio import open_output, path_error, refuse_special

    if path is None:
        return
    if not path or os.path.isdir(path):
        raise UsageError(f"{option} {path!r}: error: give a file name for the report, not a directory")
    existed = os.path.lexists(path)
    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        refuse_special(path)  # a link, FIFO or device there: refused now, not after the run
        open_output(path, append=True).close()
        if not existed:
            os.unlink(path)
    except OSError as exc:
        raise path_error(exc, f"write the {option} report") from None


def write_report(path: str, text: str) -> None:
    """The report at `path`, written through the gate (atomically; never through a link, into a
    FIFO or a device)."""
    from tipcgen.fsio import path_error, write_text

    try:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    except OSError as exc:
        raise path_error(exc, "write the report") from None
    write_text(path, text)
