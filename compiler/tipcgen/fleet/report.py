"""What happened on each node, step by step, read from the status lines its run appended to
`results_python.log` (the lines after the size the log had before the run), and the fleet's
JSON and JUnit reports (a testsuite per node, a testcase per step)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Optional

from tipcgen import __version__
from tipcgen.emit.junit import Case, Suite, junit_xml
from tipcgen.fleet.nodes import Fleet, Node

PASSED, FAILED, SKIPPED, TIMED_OUT = "passed", "failed", "skipped", "timed out"
STOPPED, NOT_RUN, LOST, REFUSED = "stopped", "not run", "lost", "refused"
FAILING = (FAILED, TIMED_OUT, STOPPED, NOT_RUN, LOST, REFUSED)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_VERDICT = re.compile(r"^Run (successfully|failed|skipped \((?P<why>[^)]*)\)) with command")
# The generated bash says why a step it stopped failed (its status line only says "Run failed"):
# "tipc: step N (train) timed out after 5 s (limit from ...); its processes were stopped", N from 1.
_STOPPED_STEP = re.compile(
    r"^tipc: step (\d+) \((\w+)\) ((?:timed out after|stalled:) [^;]*?)(?: \(limit from [^)]*\))?;"
)


@dataclass
class StepOutcome:
    index: int
    kind: str
    group: str
    log: Optional[str]
    status: str
    reason: Optional[str] = None
    status_line: Optional[str] = None


@dataclass
class NodeOutcome:
    ip: str
    dir: str
    state: str  # passed | failed | stopped | lost (its transport died) | refused (nothing started)
    exit_code: Optional[int]
    seconds: float
    reason: Optional[str]
    steps: list
    gathered: list
    gather_problem: Optional[str] = None
    stop_problem: Optional[str] = None  # the transport could not stop its run: said as an error

    @property
    def failed_step(self) -> Optional[StepOutcome]:
        return next((s for s in self.steps if s.status in (FAILED, TIMED_OUT, STOPPED, LOST)), None)


def status_lines(raw: bytes, offset: int) -> list[str]:
    """This run's status lines (colour codes and padding removed)."""
    text = raw[offset:].decode("utf-8", "replace") if offset <= len(raw) else raw.decode("utf-8", "replace")
    lines = (_ANSI.sub("", ln).strip() for ln in text.splitlines())
    return [ln for ln in lines if _VERDICT.match(ln)]


def stopped_steps(node: Node, output: list) -> dict:
    """Step index -> why the bash stopped it ("timed out after 5 s", "stalled: ..."), from the
    node's output lines."""
    found = {}
    steps = node.plan.steps
    for line in output:
        m = _STOPPED_STEP.match(_ANSI.sub("", line).strip())
        if not m:
            continue
        number, kind = int(m.group(1)), m.group(2)
        index = next((i for i in (number - 1, number) if 0 <= i < len(steps) and steps[i].kind == kind), None)
        if index is not None:
            found[index] = m.group(3)
    return found


def step_outcomes(node: Node, lines: list, ended: str, output: list) -> list[StepOutcome]:
    """One outcome per plan step: the status lines in plan order; the step that was running when
    the node's run ended without its line gets `ended` (stopped/failed/timed out), later ones
    are "not run". A failed step the bash stopped at its time limit is "timed out"."""
    outcomes: list[StepOutcome] = []
    stopped = stopped_steps(node, output)
    for step in node.plan.steps:
        out = StepOutcome(step.index, step.kind, step.group, step.log, NOT_RUN)
        if step.index < len(lines):
            line = lines[step.index]
            m = _VERDICT.match(line)
            assert m is not None
            out.status_line = line
            if m.group(1) == "successfully":
                out.status = PASSED
            elif m.group(1) == "failed":
                out.status = FAILED
                if step.index in stopped:
                    why = stopped[step.index]
                    out.status = TIMED_OUT if why.startswith("timed out") else FAILED
                    out.reason = why
            else:
                out.status, out.reason = SKIPPED, m.group("why")
        elif step.index == len(lines) and ended:
            out.status = ended
        outcomes.append(out)
    return outcomes


BYSTANDER = "another node's problems (nothing was started on any node)"  # a refused node fine itself


def _bystander(node) -> bool:
    return BYSTANDER in (node.reason or "")


def report_data(
    fleet: Fleet,
    nodes: list,
    reason: Optional[str],
    exit_code: int,
    engine: Optional[dict] = None,
    refused: Optional[list] = None,
) -> dict:
    # the node that caused the failure: one that failed, else one whose transport died (lost), and
    # only then one stopped because of another (a bystander) or refused
    first = (
        next((n for n in nodes if n.state == "failed"), None)
        or next((n for n in nodes if n.state == LOST), None)
        or next((n for n in nodes if n.state == REFUSED and not _bystander(n)), None)
        or next((n for n in nodes if n.state not in ("passed",)), None)
    )
    failure = None
    if first is not None:
        step = first.failed_step
        failure = {
            "node": first.ip,
            "step": None if step is None else {"index": step.index, "kind": step.kind, "group": step.group},
            "reason": first.reason,
        }
    from tipcgen.run.provenance import provenance

    return {
        "record": provenance("fleet", ran=fleet.ran),  # fleet runs from the repo root
        "tipcgen": __version__,
        "source": fleet.source,
        "config": fleet.config,
        "layout": fleet.plan.layout,
        "log_dir": fleet.plan.log_dir,
        "mode": fleet.mode,
        "model_name": fleet.plan.model_name,
        "start_port": fleet.start_port,
        "engine": engine or {"name": "ssh"},
        "stopped": reason,
        "refused": refused or None,  # why nothing was started (then every node is `refused`)
        "exit_code": exit_code,
        "first_failure": failure,
        "nodes": [
            {
                "ip": n.ip,
                "dir": n.dir,
                "state": n.state,
                "exit_code": n.exit_code,
                "seconds": round(n.seconds, 3),
                "reason": n.reason,
                "gathered": n.gathered,
                "gather_problem": n.gather_problem,
                "stop_problem": n.stop_problem,
                "steps": [s.__dict__ for s in n.steps],
            }
            for n in nodes
        ],
    }


def json_report(
    fleet: Fleet,
    nodes: list,
    reason: Optional[str],
    exit_code: int,
    engine: Optional[dict] = None,
    refused: Optional[list] = None,
) -> str:
    """The report; `engine`: how the nodes were reached (`{"name": "slurm", "job": ..., "nodes": ...}`)."""
    data = report_data(fleet, nodes, reason, exit_code, engine, refused)
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _count(steps: list, *states: str) -> int:
    return sum(1 for s in steps if s.status in states)


def junit_report(fleet: Fleet, nodes: list) -> str:
    """A testsuite per node, a testcase per step; failed, timed-out and stopped steps are
    failures, skipped and never-run steps are skipped (with why); the steps of a lost node that
    did not finish, and of a refused run, are errors (nobody knows how they would have ended)."""
    suites = []
    for n in nodes:
        cases = []
        for s in n.steps:
            outcome, why = "passed", ""
            if n.state in (LOST, REFUSED) and s.status in (LOST, NOT_RUN, REFUSED):
                outcome, why = "error", s.reason or n.reason or n.state
            elif s.status in (SKIPPED, NOT_RUN):
                outcome = "skipped"
                why = s.reason or ("not run: " + (n.reason or "the node's run ended before it"))
            elif s.status in (FAILED, TIMED_OUT, STOPPED):
                outcome, why = "failed", s.reason or n.reason or s.status
            classname = f"{fleet.plan.model_name}.{fleet.mode}.{n.ip}"
            kind = s.status.replace(" ", "_") if outcome in ("failed", "error") else ""
            cases.append(Case(classname, f"{s.index} {s.kind} {s.group}", outcome, why, kind, s.status_line or ""))
        if n.state == LOST:  # its steps may all have ended well: the node itself is an error
            classname = f"{fleet.plan.model_name}.{fleet.mode}.{n.ip}"
            cases.append(Case(classname, "node lost", "error", n.reason or LOST, "lost"))
        props = (("state", n.state), ("dir", n.dir), ("reason", n.reason or ""))
        suites.append(Suite(n.ip, n.seconds, props, cases))
    name = f"tipcgen fleet {fleet.plan.model_name}.{fleet.mode}"
    return junit_xml(name, suites, sum(n.seconds for n in nodes))
