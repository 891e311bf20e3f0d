"""A fleet run from start to end: preflight (and --sync), prepare (optional), the suite on every
node at once, then each node's logs gathered and its steps read from its status lines.

Exit code: 0 when every node ran every step to passed or skipped; 1 otherwise (a preflight
refusal included: then nothing was started on any node).
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Optional

from tipcgen.errors import UsageError
from tipcgen.fleet.bounded import SLACK
from tipcgen.fleet.gather import gather_node, node_dir
from tipcgen.fleet.nodes import Fleet, Node
from tipcgen.fleet.preflight import NodeCheck, check_nodes, sync_nodes
from tipcgen.fleet.report import (
    BYSTANDER,
    FAILED,
    LOST,
    NOT_RUN,
    REFUSED,
    SKIPPED,
    STOPPED,
    TIMED_OUT,
    NodeOutcome,
    StepOutcome,
    status_lines,
    step_outcomes,
)
from tipcgen.fleet.session import NodeRun, Printer, node_token, run_everywhere
from tipcgen.fleet.ssh import PREPARE, RUNNER
from tipcgen.fleet.transport import Transport
from tipcgen.inputs import read_log

# What the fleet sets itself on every node; --env may not override them.
RESERVED_ENV = ("TIPC_NODE_IP", "FLAGS_START_PORT", "PADDLE_START_PORT", "TIPC_STEP_TIMEOUT", "TIPC_FLEET_RUN")
MAX_STATUS_BYTES = 16 << 20  # a node's gathered status log (a few KiB)
MAX_OUTPUT_BYTES = 64 << 20  # what a node printed, as fleet kept it (its last 64 MiB)
PREPARE_OUT, RUN_OUT = "fleet_prepare.out", "fleet_run.out"


@dataclass(frozen=True)
class Settings:
    transport: Transport  # how the nodes are reached: ssh or srun
    prepare: bool = False
    sync: bool = False
    step_timeout: Optional[int] = None  # TIPC_STEP_TIMEOUT on the nodes (the bash's step limit)
    run_timeout: float = 86400.0  # the whole run on every node
    grace: float = 10.0  # SIGTERM -> SIGKILL when stopping a node
    env: tuple = ()  # (NAME, VALUE) exported on every node


@dataclass
class FleetResult:
    exit_code: int
    refused: list  # preflight problems (then nothing started)
    nodes: list  # NodeOutcome
    reason: Optional[str]  # why the nodes were stopped, if they were


def node_env(fleet: Fleet, settings: Settings, node: Node) -> list:
    # Both port variables: the launcher (paddle >= 2.3) reads only PADDLE_START_PORT, and one the
    # nodes' own environment holds would override FLAGS_START_PORT.
    port = str(fleet.start_port)
    env = [("TIPC_NODE_IP", node.ip), ("FLAGS_START_PORT", port), ("PADDLE_START_PORT", port)]
    if settings.step_timeout is not None:
        env.append(("TIPC_STEP_TIMEOUT", str(int(settings.step_timeout))))  # the bash takes digits only
    return env + list(settings.env)


def suite_command(fleet: Fleet) -> list:
    return ["bash", RUNNER, fleet.config, fleet.mode]


def prepare_command(fleet: Fleet) -> list:
    return ["bash", PREPARE, fleet.config, fleet.mode]


def preflight(fleet: Fleet, settings: Settings, printer: Optional[Printer] = None) -> tuple[list[str], dict]:
    """(problems, ip -> NodeCheck). With --sync, files that differ are copied (each named), then
    checked again."""
    env = lambda n: node_env(fleet, settings, n)  # noqa: E731
    checks = check_nodes(fleet, settings.transport, env=env)
    problems = [p for c in checks for p in c.problems]
    if not problems and settings.sync and any(c.differs for c in checks):
        problems = sync_nodes(fleet, settings.transport, {c.ip: c for c in checks}, printer.line if printer else None)
        if problems:  # the copy failed: its reasons, not "run with --sync" for each file
            return problems, {c.ip: c for c in checks}
        checks = check_nodes(fleet, settings.transport, synced=True, env=env)
        problems = [p for c in checks for p in c.problems]
    elif problems and settings.sync and any(c.differs for c in checks):
        # Not "run with --sync" per file: it was given, and waits for the problems above.
        files = sorted({f for c in checks for f in c.missing + c.changed})
        waiting = f"--sync copies {', '.join(files)} once the problems above are fixed"
        return [*problems, waiting], {c.ip: c for c in checks}
    problems += [p for c in checks for p in c.differs]
    return problems, {c.ip: c for c in checks}


def _ended_as(run: Optional[NodeRun], reason: Optional[str]) -> tuple[str, str, Optional[str]]:
    """(node state, status of the step it was in, why) for a node's run."""
    if run is None:  # the suite never started (prepare failed somewhere)
        return "failed", NOT_RUN, reason
    if run.stopped:
        status = TIMED_OUT if run.stopped.startswith("timed out") else STOPPED
        why = f"stopped: {run.stopped}" + (f" ({run.stop_note})" if run.stop_note else "")
        return "stopped", status, why
    if run.returncode != 0:
        return "failed", FAILED, f"the run on this node exited {run.returncode}"
    return "passed", "", None


def _before_the_suite(prep: Optional[NodeRun], reason: Optional[str]) -> tuple[str, Optional[str]]:
    """(state, why) of a node whose suite never started: its own prepare failed, it was stopped
    because another node's did, or it was ready and the others were not."""
    if prep is None:
        return "failed", reason
    if prep.stopped:
        return "stopped", f"stopped during prepare: {prep.stopped}"
    if prep.returncode not in (None, 0):
        return "failed", f"prepare failed on this node (exit {prep.returncode})"
    return "stopped", f"prepare passed here; the suite did not start ({reason})"


def outcome(node: Node, run: Optional[NodeRun], check: NodeCheck, dest: str, gathered: tuple) -> NodeOutcome:
    """A node's outcome from its run and the status log gathered from it. A node the transport
    could no longer reach (its logs could not be gathered, or its run could not be stopped) is
    `lost`: its steps are what its streamed output last said."""
    state, ended, why = _ended_as(run, None if run else "prepare failed")
    got, problem, reached = gathered
    status_log = os.path.join(dest, os.path.basename(node.plan.status_log))
    # gathered files are read inside the node's own folder (a link there reads as nothing)
    raw = read_log(status_log, dest, MAX_STATUS_BYTES) or b""
    output: list = []
    if run is not None:
        out = read_log(run.out_path, os.path.dirname(run.out_path) or ".", MAX_OUTPUT_BYTES) or b""
        output = out.decode("utf-8", "replace").splitlines()
    lost = run is not None and not reached
    lines = status_lines(raw, check.status_offset)
    if lost:  # what the node last said while we still heard it
        lines = status_lines("\n".join(output).encode(), 0)
        ended = LOST
    steps = step_outcomes(node, lines, ended, output)
    if lost:
        last = next((ln for ln in reversed(output) if ln.strip() and not ln.startswith("tipcgen-fleet:")), "")
        said = f"; its last word: {last.strip()[:300]}" if last else "; it said nothing"
        ran = (
            f"its run exited {run.returncode}"
            if run is not None and run.returncode is not None
            else "its run did not end"
        )
        why = f"lost: {problem or (run.stop_note if run else None) or 'unreachable'} ({ran}{said})"
        state = "lost"
        for s in steps:
            if s.status in (LOST, NOT_RUN):
                s.reason = why
    for s in steps:
        if s.status in (STOPPED, TIMED_OUT, FAILED) and s.reason is None and why:
            s.reason = why
    if state == "passed" and any(s.status not in ("passed", SKIPPED) for s in steps):
        state = "failed"
        why = (
            why
            or "; ".join(
                f"step {s.index + 1} {s.kind}: {s.status}"
                for s in steps
                if s.status != "passed" and s.status != SKIPPED
            )[:500]
        )
    return NodeOutcome(
        node.ip,
        node.dir,
        state,
        run.returncode if run else None,
        run.seconds if run else 0.0,
        why,
        steps,
        list(got),
        problem,
        run.stop_note if run else None,
    )


def refused_outcomes(fleet: Fleet, problems: list) -> list[NodeOutcome]:
    """Every node `refused` when the preflight refused the run: its own problems, or that
    another node's stopped it; every step `refused` (nothing was started anywhere)."""
    out = []
    for n in fleet.nodes:
        own = [p for p in problems if p.startswith(f"node {n.ip}:") or p.startswith(f"node {n.ip} (")]
        if not own and not any(p.startswith("node ") for p in problems):  # the engine's (Slurm's)
            own = problems
        why = "refused: " + ("; ".join(own) if own else BYSTANDER)
        steps = [StepOutcome(s.index, s.kind, s.group, s.log, REFUSED, why) for s in n.plan.steps]
        out.append(NodeOutcome(n.ip, n.dir, REFUSED, None, 0.0, why, steps, []))
    return out


def _fresh(path: str) -> str:
    if os.path.islink(path):  # emptied and refilled: never through a link to elsewhere
        os.unlink(path)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, exist_ok=True)
    return path


def local_dirs(fleet: Fleet, root: str = ".") -> dict:
    """ip -> the directory its logs land in, each a directory of its own right below
    `<log_dir>/nodes/`; UsageError when `nodes` is a link (the fleet empties its entries)."""
    dests = {n.ip: os.path.join(root, node_dir(n.plan.log_dir, n.ip)) for n in fleet.nodes}
    for path in dests.values():
        parent = os.path.dirname(path)
        if os.path.islink(parent):
            raise UsageError(
                f"{parent}: error: a symbolic link; tipcgen fleet empties and refills the node "
                "directories below it, so it must be a directory of the repo: remove the link"
            )
    return dests


def write_run_copies(fleet: Fleet, root: str = ".") -> None:
    """Write the files made for this run (the config's run copy) here, where a node sharing this
    file system reads them; never through a link."""
    from tipcgen.fsio import check_tree, write_atomic

    for shared in fleet.files:
        if shared.written:
            check_tree(root, [shared.path], "the run copy of the config")
            path = os.path.join(root, shared.path)
            if os.path.islink(path):
                os.unlink(path)
            write_atomic(path, shared.data)


def _prepare_token(token: str) -> str:
    return token + "p"  # prepare's runs are stopped apart from the suite's


def run_fleet(fleet: Fleet, settings: Settings, printer: Printer, root: str = ".") -> FleetResult:
    dests = local_dirs(fleet, root)  # before anything is started anywhere
    write_run_copies(fleet, root)
    problems, checks = preflight(fleet, settings, printer)
    dests = {ip: _fresh(path) for ip, path in dests.items()}  # this run's logs only: none when refused
    if problems:
        return FleetResult(1, problems, refused_outcomes(fleet, problems), None)
    token = secrets.token_hex(6)

    def everywhere(command: list, tok: str, out_name: str) -> tuple[list, Optional[str]]:
        return run_everywhere(
            fleet.nodes,
            lambda n: command,
            opts=settings.transport,
            env=lambda n: node_env(fleet, settings, n),
            token=tok,
            timeout=settings.run_timeout,
            grace=settings.grace,
            out_path=lambda n: os.path.join(dests[n.ip], out_name),
            printer=printer,
        )

    runs: list = []
    preps: list = []
    reason = None
    if settings.prepare:
        preps, reason = everywhere(prepare_command(fleet), _prepare_token(token), PREPARE_OUT)
        if reason or not all(r.ok for r in preps):
            reason = f"prepare: {reason or 'failed'}"
    if not reason:
        runs, reason = everywhere(suite_command(fleet), token, RUN_OUT)
    by_ip = {r.node.ip: r for r in runs}
    prep_by_ip = {r.node.ip: r for r in preps}
    bound = settings.transport.connect_timeout + SLACK

    def finish(n: Node) -> NodeOutcome:
        gathered = gather_node(n, settings.transport, dests[n.ip], bound) if runs else ([], None, True)
        out = outcome(n, by_ip.get(n.ip), checks[n.ip], dests[n.ip], gathered)
        if not runs:
            out.state, out.reason = _before_the_suite(prep_by_ip.get(n.ip), reason)
        return out

    with ThreadPoolExecutor(max_workers=len(fleet.nodes)) as pool:
        outcomes = list(pool.map(finish, fleet.nodes))
    ok = all(o.state == "passed" for o in outcomes)
    return FleetResult(0 if ok else 1, [], outcomes, reason)


def planned_commands(fleet: Fleet, settings: Settings, token: str = "TOKEN") -> list[tuple[Node, list]]:
    """Per node, (what, argv) of every ssh command a run would use, in order (--dry-run)."""
    from tipcgen.fleet.gather import node_gather_script
    from tipcgen.fleet.node_doctor import probe_for, probe_script
    from tipcgen.fleet.preflight import sync_command
    from tipcgen.fleet.ssh import preflight_script, run_script, stop_script

    out = []
    for n in fleet.nodes:
        opts = settings.transport
        env = node_env(fleet, settings, n)
        probe = probe_for(n.plan, n.ip, env)
        script = preflight_script(
            n.dir, [f.path for f in fleet.files], n.plan.status_log, probe_script(probe) if probe else ""
        )
        cmds = [
            ("check (files, then the interpreter, address and ports as the run will see them)", opts.argv(n.ip, script))
        ]
        if settings.sync:
            files = ", ".join(f.path for f in fleet.files)
            cmds.append((f"sync (when a file differs; a tar stream of {files} on stdin)", sync_command(n, opts)))
        ptok, rtok = node_token(_prepare_token(token), n.ip), node_token(token, n.ip)
        if settings.prepare:
            cmds.append(("prepare", opts.argv(n.ip, run_script(n.dir, prepare_command(fleet), env, ptok), run=ptok)))
        cmds.append(("run", opts.argv(n.ip, run_script(n.dir, suite_command(fleet), env, rtok), run=rtok)))
        if opts.name == "ssh":
            stop = f"exec /bin/sh -c {shlex.quote(stop_script(n.dir, rtok, settings.grace))}"
            cmds.append(("stop (when a node fails)", opts.argv(n.ip, stop)))
        script = node_gather_script(n)
        cmds.append(
            (f"gather (a tar stream, unpacked into {node_dir(n.plan.log_dir, n.ip)}/)", opts.argv(n.ip, script))
        )
        out.append((n, cmds))
    return out
