"""The reference executor: run a Plan's steps like the generated bash runner does.

Same argv (no shell), same CUDA_VISIBLE_DEVICES, same log files, same status lines appended to
`results_python.log`, same skip rule (a failed train skips its run's eval/export/inference) and
the same summary. Like the bash, every step has a time limit (`--step-timeout` or
TIPC_STEP_TIMEOUT, else the Plan's, else tipcgen's default: plan/limits.py), after which the
step's whole process group is killed (SIGTERM, then SIGKILL after a grace period), so that the
workers `paddle.distributed.launch` spawns do not outlive the step; a train step whose logs stop
growing for its stall limit is stopped the same way (the stall watchdog, run/watch.py).

`run_plan(plan, timeout=...)` is the API; `tipcgen run` (cli/run.py) is a thin CLI over it.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, Optional

from tipcgen.errors import TipcError, UsageError
from tipcgen.fsio import PathError, append_text, open_output, write_atomic
from tipcgen.inputs import dirs_below, read_bytes
from tipcgen.plan.limits import DEFAULT_SECONDS, default_limit
from tipcgen.plan.steps import SILENT_KINDS, Plan, Step, skip_reason
from tipcgen.run.watch import StallClock

DEFAULT_TIMEOUT = float(DEFAULT_SECONDS)  # seconds per step without a limit of its own
DEFAULT_GRACE = 10.0  # seconds between SIGTERM and SIGKILL

PASSED, FAILED, SKIPPED, TIMED_OUT, STALLED = "passed", "failed", "skipped", "timed out", "stalled"
STEP_TIMEOUT_ENV, STALL_TIMEOUT_ENV = "TIPC_STEP_TIMEOUT", "TIPC_STALL_TIMEOUT"


@dataclass
class StepResult:
    step: Step
    status: str  # passed | failed | skipped | timed out | stalled
    returncode: Optional[int] = None  # None: not run (skipped, timed out, stalled, unsplittable)
    seconds: float = 0.0
    reason: Optional[str] = None  # why it was skipped, timed out, stalled or could not start
    status_line: str = ""  # the line appended to the status log (without colour codes)
    limit: str = ""  # the time limit that applied and where it came from, e.g. "5 s (TIPC_STEP_TIMEOUT)"

    @property
    def ok(self) -> bool:
        return self.status == PASSED

    @property
    def counts_as_failed(self) -> bool:
        return self.status in (FAILED, TIMED_OUT, STALLED)

    @property
    def incident(self) -> Optional[str]:
        """What the summary says of a step stopped by a limit ("step 3 timed out after 5 s")."""
        if self.status not in (TIMED_OUT, STALLED) or not self.reason:
            return None
        return f"step {self.step.index + 1} {self.reason.split(' (limit', 1)[0]}"


@dataclass(frozen=True)
class Summary:
    run: int
    passed: int
    failed: int
    skipped: int
    timed_out: int
    stalled: int = 0
    incidents: tuple = ()  # "step 3 timed out after 5 s", "step 1 stalled after 30 s without log output"

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def sentence(self, status_log: str) -> str:
        """The bash runner's last line (a timed-out or stalled step counts as failed)."""
        return (
            f"tipc: {self.run} steps run, {self.passed} passed, {self.failed} failed, "
            f"{self.skipped} skipped (status lines in {status_log})" + "".join(f"; {i}" for i in self.incidents)
        )


def summarize(results: list[StepResult]) -> Summary:
    run = sum(1 for r in results if r.status != SKIPPED)
    passed = sum(1 for r in results if r.status == PASSED)
    timed_out = sum(1 for r in results if r.status == TIMED_OUT)
    stalled = sum(1 for r in results if r.status == STALLED)
    failed = sum(1 for r in results if r.counts_as_failed)
    incidents = tuple(i for i in (r.incident for r in results) if i)
    return Summary(run, passed, failed, len(results) - run, timed_out, stalled, incidents)


def env_seconds(name: str, environ: Mapping[str, str]) -> Optional[float]:
    """A limit from the environment: None when unset or empty, 0 for "no limit"; a value that is
    not a non-negative number is a UsageError (before any step runs)."""
    raw = environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"{name}={raw!r}: give a number of seconds (0: no limit)")
    return value


@dataclass(frozen=True)
class LimitOverrides:
    """The run-wide overrides of the Plan's limits: from the options, else the environment
    (None: not given; 0: no limit). `for_step` resolves one step's limits and says whence."""

    timeout: Optional[float] = None
    stall: Optional[float] = None
    timeout_from: str = "--step-timeout"
    stall_from: str = "--stall-timeout"

    @classmethod
    def of(cls, timeout: Optional[float], stall: Optional[float], environ: Mapping[str, str]) -> LimitOverrides:
        t_env, s_env = env_seconds(STEP_TIMEOUT_ENV, environ), env_seconds(STALL_TIMEOUT_ENV, environ)
        return cls(
            timeout if timeout is not None else t_env,
            stall if stall is not None else s_env,
            "--step-timeout" if timeout is not None else STEP_TIMEOUT_ENV,
            "--stall-timeout" if stall is not None else STALL_TIMEOUT_ENV,
        )

    def for_step(self, step: Step, mode: str) -> tuple[Optional[float], str, Optional[float], str]:
        """(seconds, source, stall seconds, stall source) for `step`; None: no limit, no watchdog."""
        if self.timeout is not None:
            timeout, t_src = self.timeout or None, self.timeout_from
        elif step.timeout is not None:
            timeout, t_src = float(step.timeout), "the spec's limits"
        else:
            timeout, t_src = float(default_limit(step.kind, mode)), "tipcgen's default"
        stall, s_src = (float(step.stall) if step.stall else None), "the spec's limits"
        if self.stall is not None and step.kind == "train":
            stall, s_src = self.stall or None, self.stall_from
        return timeout, t_src, stall, s_src


def step_env(step: Step, base: Optional[dict] = None, defaults: tuple = ()) -> dict:
    """The environment a step runs in: `base` (os.environ) with its CUDA_VISIBLE_DEVICES and the
    Plan's `env` defaults (each only where `base` leaves it unset or empty, as the bash does)."""
    env = dict(os.environ if base is None else base)
    for name, value in defaults:
        if not env.get(name):
            env[name] = value
    if step.cuda_visible_devices is None:
        env.pop("CUDA_VISIBLE_DEVICES", None)
    else:
        env["CUDA_VISIBLE_DEVICES"] = step.cuda_visible_devices
    return env


def status_record(line: str) -> str:
    """What the bash appends for a status line: `printf '\\033[33m %s\\033[0m\\n'`."""
    return f"\033[33m {line}\033[0m\n"


def multinode_hint(step: Step, environ: Optional[Mapping[str, str]] = None) -> str:
    """The message for a multi-node train that did not finish: usually a peer never joined."""
    env: Mapping[str, str] = os.environ if environ is None else environ
    ips = next((a.split("=", 1)[1] for a in (step.argv or ()) if a.startswith("--ips=")), "?")
    port = env.get("FLAGS_START_PORT")
    return (
        f"the other {step.nodes - 1} node(s) did not join within the timeout, "
        f"or training outlasted it. Check that the ips in gpu_list ({ips}) include this machine "
        f"and are reachable from every node, that FLAGS_START_PORT is set to the same free port "
        f"on every node (here: {port if port else 'unset'}), and that every node runs the same "
        f"command with the same config and mode at the same time."
    )


def _proc_table() -> dict:
    """pid -> (ppid, pgrp, starttime, state) of every process, from /proc (empty elsewhere)."""
    table: dict[int, tuple[int, int, str, str]] = {}
    if not os.path.isdir("/proc"):
        return table
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            raw = read_bytes(f"/proc/{entry}/stat", 4096, tree="/proc", what="a process's status")
        except TipcError:  # the process is gone
            continue
        stat = raw.decode("utf-8", "replace")
        fields = stat[stat.rfind(")") + 2 :].split()
        # fields: state ppid pgrp session ... starttime is field 22 of stat, index 19 here
        if len(fields) > 19:
            table[int(entry)] = (int(fields[1]), int(fields[2]), fields[19], fields[0])
    return table


class ProcessTree:
    """Everything a step started, tracked by (pid, start time) while it runs.

    paddle.distributed.launch puts each worker in a session of its own, so the step's process
    group alone misses them; a worker orphaned by a killed launcher is still ours to stop.
    """

    def __init__(self, root: int):
        self.root = root
        self.known: dict = {}  # pid -> starttime

    def refresh(self) -> None:
        table = self._table = _proc_table()
        frontier = [self.root, *list(self.known)]
        seen = set(frontier)
        while frontier:
            parent = frontier.pop()
            for pid, (ppid, _pgrp, start, _state) in table.items():
                if ppid == parent and pid not in seen:
                    seen.add(pid)
                    self.known.setdefault(pid, start)
                    frontier.append(pid)
        for pid, (_ppid, pgrp, start, _state) in table.items():
            if pgrp == self.root and pid not in self.known:
                self.known[pid] = start

    def alive(self) -> list[int]:
        """Tracked processes still running (the same pid and start time, not a zombie)."""
        table = _proc_table()
        return [
            pid
            for pid, start in self.known.items()
            if pid in table and table[pid][2] == start and table[pid][3] not in ("Z", "X")
        ]

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.root, sig)
        for pid in self.alive():
            for target in (lambda pid=pid: os.killpg(os.getpgid(pid), sig), lambda pid=pid: os.kill(pid, sig)):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    target()


def kill_group(proc: subprocess.Popen, grace: float, tree: Optional[ProcessTree] = None) -> None:
    """Stop the step and everything it started: SIGTERM, then SIGKILL after `grace` seconds."""
    tree = tree or ProcessTree(proc.pid)
    tree.refresh()
    tree.signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        tree.refresh()
        if proc.poll() is not None and not tree.alive():
            break
        time.sleep(0.05)
    else:
        tree.signal(signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):  # SIGKILL cannot be ignored: it does not expire
        proc.wait(timeout=max(grace, 1.0))


def _reap_leftovers(proc: subprocess.Popen, grace: float, tree: ProcessTree) -> None:
    """After the step's own process exits, stop what it left running (in its group or not)."""
    tree.refresh()
    if tree.alive():
        kill_group(proc, grace, tree)


def escapes(path: str, root: str) -> Optional[str]:
    """Where `path` really leads (every symbolic link resolved, like `realpath -m`) when that
    is outside the directory `root` (already resolved); None when it stays inside."""
    real = os.path.realpath(path)
    if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
        return None
    return real


def _refusal(path: str, what: str, real: str, root: str) -> str:
    return f"refusing to write {what}: {path} leads to {real}, outside {root} (a symbolic link on the way)"


def check_log_dir(plan: Plan, cwd: str) -> None:
    """Before a run, as the bash does: the log directory and every symbolic link below it (the
    trainers' save directories are there) resolve inside the model repo `cwd`; else a UsageError."""
    root = os.path.realpath(cwd)
    log_dir = os.path.join(cwd, plan.log_dir)
    real = escapes(log_dir, root)
    if real is not None:
        raise UsageError(_refusal(plan.log_dir, "the logs", real, root))
    for dirpath, dirnames, filenames in dirs_below(log_dir):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            real = escapes(path, root) if os.path.islink(path) else None
            if real is not None:
                raise UsageError(_refusal(os.path.relpath(path, cwd), "logs and saved models", real, root))


def _writable(path: str, root: str, what: str) -> Optional[str]:
    """Why `path` may not be written (its directory, or itself as a symbolic link, leads outside
    `root`), as the bash's tipc_writable decides; None when it may."""
    directory = os.path.dirname(path) or "."
    real = escapes(directory, root)
    if real is None and os.path.islink(path):
        real, directory = escapes(path, root), path
    return None if real is None else _refusal(directory, what, real, root)


def _open_log(cwd: str, log: Optional[str]) -> tuple:
    """(the step's log opened like the bash's `>"$log"`, None), (None, None) without a log, or
    (None, why) when it cannot be opened: no directory is made for it (run_plan made the log
    directory, as the bash does), and the step then fails unrun with status 1, as the redirect
    makes it."""
    if not log:
        return None, None
    try:
        return open_output(os.path.join(cwd, log)), None
    except PathError as exc:
        return None, f"tipc: {exc}"


def _tee(proc: subprocess.Popen, out) -> threading.Thread:
    """`2>&1 | tee LOG`: copy the step's output to its log and to our stdout as it comes."""

    def copy() -> None:
        pipe = proc.stdout
        assert pipe is not None
        for chunk in iter(lambda: os.read(pipe.fileno(), 65536), b""):
            out.write(chunk)
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()

    thread = threading.Thread(target=copy, daemon=True)
    thread.start()
    return thread


def _close(copier: Optional[threading.Thread], out, grace: float) -> None:
    if copier:
        copier.join(timeout=grace)
    if out:
        out.close()


@dataclass(frozen=True)
class Bounds:
    """One step's limits: seconds it may run and its logs may stay unchanged (None: no limit)."""

    timeout: Optional[float]
    timeout_from: str
    stall: Optional[float] = None
    stall_from: str = ""

    def describe(self) -> str:
        """The limits for reports: "5 s (TIPC_STEP_TIMEOUT)", "none"; and the stall limit."""
        text = f"{self.timeout:g} s ({self.timeout_from})" if self.timeout else f"none ({self.timeout_from})"
        return text + (f", stall {self.stall:g} s ({self.stall_from})" if self.stall else "")


def _wait(proc: subprocess.Popen, tree: ProcessTree, bounds: Bounds, clock: Optional[StallClock]) -> Optional[str]:
    """Wait for the step in slices, noting what it starts (launchers detach workers) -> None when
    it ended, or why it must be stopped (its time limit passed, its logs stopped growing)."""
    started = time.monotonic()
    deadline = started + bounds.timeout if bounds.timeout else math.inf
    while True:
        tree.refresh()
        now = time.monotonic()
        try:
            proc.wait(timeout=max(0.0, min(0.5, deadline - now)))
            return None
        except subprocess.TimeoutExpired:
            now = time.monotonic()
        if now >= deadline:
            return f"timed out after {bounds.timeout:g} s (limit from {bounds.timeout_from})"
        if clock is not None and bounds.stall and clock.quiet(now) >= bounds.stall:
            return f"stalled: no log output for {bounds.stall:g} s (limit from {bounds.stall_from})"


def _write_step_files(step: Step, top: str, root: str) -> Optional[str]:
    """Write what the step reads first (as the bash does); why it cannot be, or None."""
    for path, text in step.files:
        why = _writable(os.path.join(top, path), root, "the step's config")
        if why:
            return why
        try:
            write_atomic(os.path.join(top, path), text.encode("utf-8", "surrogateescape"), mode=0o644)
        except PathError as exc:
            return str(exc)
    return None


def _execute(step: Step, cwd: str, bounds: Bounds, grace: float, env: dict) -> tuple[str, Optional[int], Optional[str]]:
    """Run one step -> (status, returncode, reason)."""
    if step.argv is None:
        return FAILED, None, "cannot split the command (a quote is not closed)"
    if not step.argv:
        return FAILED, 127, "empty command"
    root, top = os.path.realpath(cwd), cwd
    cwd = os.path.join(cwd, step.cwd) if step.cwd else cwd
    why = _writable(os.path.join(cwd, "."), root, f"the step's files in {step.cwd}") if step.cwd else None
    if why is None and step.log:
        why = _writable(os.path.join(cwd, step.log), root, "the log")
    why = why or _write_step_files(step, top, root)
    if why:
        return FAILED, 2, f"tipc: {why}"
    out, why = _open_log(cwd, step.log)
    if why:
        return FAILED, 1, why
    tee = out is not None and step.output == "tee"
    copier: Optional[threading.Thread] = None
    try:
        try:
            proc = subprocess.Popen(
                list(step.argv),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if tee else out,
                stderr=subprocess.STDOUT if out else None,
                start_new_session=True,
            )
        except OSError as exc:  # like the shell: 127 not found, 126 not executable
            code = 127 if isinstance(exc, FileNotFoundError) else 126
            msg = f"tipc: {step.argv[0]}: {exc.strerror or exc}\n"
            if out:
                out.write(msg.encode())
            return FAILED, code, msg.strip()
        tree = ProcessTree(proc.pid)
        copier = _tee(proc, out) if tee else None
        clock = StallClock(cwd, step.log, time.monotonic()) if bounds.stall else None
        try:
            stopped = _wait(proc, tree, bounds, clock)
        except BaseException:  # Ctrl-C: the step runs in its own session, so stop it ourselves
            kill_group(proc, grace, tree)
            raise
        if stopped:
            kill_group(proc, grace, tree)
            return (STALLED if stopped.startswith("stalled") else TIMED_OUT), None, stopped
        _reap_leftovers(proc, grace, tree)
        code = proc.returncode
        return (PASSED if code == 0 else FAILED), code, None
    finally:
        _close(copier, out, grace)


def run_plan(
    plan: Plan,
    *,
    timeout: Optional[float] = None,
    on_event: Optional[Callable] = None,
    cwd: str = ".",
    grace: float = DEFAULT_GRACE,
    environ: Optional[dict] = None,
    stall: Optional[float] = None,
) -> list[StepResult]:
    """Run every step of `plan` in `cwd`; return one StepResult per step, in order.

    `timeout` / `stall` (seconds, 0: none) override every step's limit and every train step's
    stall limit, as TIPC_STEP_TIMEOUT / TIPC_STALL_TIMEOUT do when they are None; else each
    step has the Plan's limits, else tipcgen's default (plan/limits.py).
    `on_event(kind, step, result)` is called with kind "start" (result None) before a step runs
    and "end" after it ran or was skipped. `environ` defaults to os.environ.
    """
    if any(step.service or step.quiet for step in plan.steps):
        from tipcgen.dialects import get_layout

        # A background server and its stop (the serving chains) are the generated script's job.
        raise UsageError(
            f"the {plan.layout} plan starts a background service, which `tipcgen run` does not run: run "
            f"test_tipc/{get_layout(plan.layout).dialect.script} (tipcgen build writes it)"
        )
    base = dict(os.environ if environ is None else environ)
    overrides = LimitOverrides.of(timeout, stall, base)
    check_log_dir(plan, cwd)
    os.makedirs(os.path.join(cwd, plan.log_dir), exist_ok=True)
    status_path = os.path.join(cwd, plan.status_log)
    why = _writable(status_path, os.path.realpath(cwd), "the status lines")
    if why:
        raise UsageError(why)
    if plan.preamble:
        append_text(status_path, "".join(f"{line}\n" for line in plan.preamble))
    failed: set = set()
    results: list[StepResult] = []
    for step in plan.steps:
        reason = skip_reason(step, failed)
        if reason:
            result = StepResult(step, SKIPPED, reason=reason, status_line=plan.status_line(step, False, skipped=reason))
        else:
            if on_event:
                on_event("start", step, None)
            started = time.monotonic()
            bounds = Bounds(*overrides.for_step(step, plan.mode))
            status, code, why = _execute(step, cwd, bounds, grace, step_env(step, base, plan.env))
            seconds = time.monotonic() - started
            if status == TIMED_OUT and step.kind == "train" and step.nodes > 1:
                why = f"{why}: {multinode_hint(step, base)}"
            line = "" if step.kind in SILENT_KINDS else plan.status_line(step, status == PASSED)
            result = StepResult(step, status, code, seconds, why, line, limit=bounds.describe())
            if result.counts_as_failed:
                failed.add(step.index)
        if result.status_line and step.writes_status:  # a silent step (SILENT_KINDS) writes none, as upstream's
            append_text(status_path, status_record(result.status_line))
        results.append(result)
        if on_event:
            on_event("end", step, result)
    return results
