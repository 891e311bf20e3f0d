"""Stop means stopped (issue 32): every way out of `session.run_everywhere` (a node failing, the
run bound, SIGINT, SIGTERM, an exception here) stops every node that has not ended well through
the transport's `stop`, the one place a run is stopped, and nothing of the run is left.

Real processes, no mocks: a transport that runs each node's script on this machine with
/bin/sh (dash on Debian, as Slurm's `sh -c` and many login shells do) and stops it with the ssh
engine's own stop script, also under /bin/sh. The ssh and Slurm engines themselves are tested
on real sshd and a real Slurm cluster (tests/test_fleet_ssh.py, tests/test_fleet_slurm.py).
"""

from __future__ import annotations

import ast
import gc
import io
import os
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Optional

import pytest

from helpers.machine import bound
from tipcgen.fleet.bounded import run_bounded
from tipcgen.fleet.nodes import Node
from tipcgen.fleet.session import Printer, Stop, ask_stop, run_everywhere
from tipcgen.fleet.ssh import MARK, TOKEN_VAR, stop_answer, stop_script

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "compiler" / "tipcgen"
HANG = ["sh", "-c", "setsid sleep 300 & wait"]  # a launcher whose trainer is a session of its own


class LocalTransport:
    """Each node's script under /bin/sh here; `stop` is the ssh engine's stop script under /bin/sh."""

    name = "local"
    connect_timeout = 5.0

    def __init__(self) -> None:
        self.stopped: list = []

    def argv(self, host: str, script: str, stdin: bool = False, run: Optional[str] = None) -> list:
        return ["/bin/sh", "-c", script]

    def failure(self, host: str, code: Optional[int], err: str, bound: float) -> str:
        return f"node {host}: exited {code}: {err.strip()}"

    def stop(self, host: str, directory: str, run: str, grace: float) -> Optional[str]:
        self.stopped.append(run)
        code, out, err = run_bounded(["/bin/sh", "-c", stop_script(directory, run, grace)], 30)
        return stop_answer(host, out) if f"{MARK} stopped" in out else self.failure(host, code, err, 30)


def with_token(prefix: str) -> list:
    """pids of live processes whose environment carries a run token starting with `prefix`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            env = Path(f"/proc/{entry}/environ").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z" and any(v.startswith(f"{TOKEN_VAR}={prefix}".encode()) for v in env):
            found.append(int(entry))
    return found


@pytest.fixture
def nodes(tmp_path) -> list:
    out = []
    for ip in ("127.0.0.2", "127.0.0.3"):
        d = tmp_path / ip
        (d / "test_tipc" / "output").mkdir(parents=True)
        out.append(Node(ip, str(d), None))  # type: ignore[arg-type]  # the run needs no plan
    return out


def run(nodes, tmp_path, commands: dict, timeout: float = 60, out_path=None):
    transport = LocalTransport()
    token = f"t{os.getpid()}x{time.monotonic_ns()}"
    try:
        runs, reason = run_everywhere(
            nodes,
            lambda n: commands[n.ip],
            opts=transport,
            env=lambda n: [],
            token=token,
            timeout=timeout,
            grace=1,
            out_path=out_path or (lambda n: str(tmp_path / "out" / n.ip / "run.out")),
            printer=Printer(io.StringIO()),
        )
    finally:
        left = with_token(token)
        for pid in left:
            os.kill(pid, signal.SIGKILL)
    assert not left, f"processes of the run left: {left}"
    return runs, reason, transport, token


def started(tmp_path: Path, count: int = 2, bound: float = 20) -> None:
    """Wait until `count` runs hold their trainers (their pid files are written first)."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        if len(list(tmp_path.glob("*/test_tipc/output/.tipcgen-fleet.pid"))) >= count:
            time.sleep(0.3)  # the launcher starts its trainer
            return
        time.sleep(0.05)


def test_a_failing_node_stops_the_other_through_the_transport(nodes, tmp_path):
    runs, reason, transport, token = run(nodes, tmp_path, {"127.0.0.2": ["sh", "-c", "sleep 0.5; exit 3"],
                                                          "127.0.0.3": HANG})  # fmt: skip
    assert reason == "node 127.0.0.2 failed (exit 3)"
    assert f"{token}-127.0.0.3" in transport.stopped
    assert runs[1].stopped == reason and runs[1].stop_note is None


def test_the_run_bound_stops_every_node(nodes, tmp_path):
    t0 = time.monotonic()
    runs, reason, transport, token = run(nodes, tmp_path, {n.ip: HANG for n in nodes}, timeout=1)
    assert reason == "timed out after 1 s" and time.monotonic() - t0 < 1 + 1 + bound(5)
    assert sorted(transport.stopped) == [f"{token}-127.0.0.2", f"{token}-127.0.0.3"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("dropped", [False, True], ids=["raised", "dropped"])
def test_a_signal_here_stops_every_node(nodes, tmp_path, sig, dropped):
    """The CLI's handlers (ask_stop) stop every node; also when the exception a handler raises is
    dropped, as Python drops one raised inside a garbage collector's callback or a __del__."""

    def as_the_cli_does(signum, frame):
        try:
            ask_stop("interrupted" if signum == signal.SIGINT else "terminated (SIGTERM)")
        except (KeyboardInterrupt, Stop):
            if not dropped:
                raise

    saved = {s: signal.signal(s, as_the_cli_does) for s in (signal.SIGINT, signal.SIGTERM)}
    timer = threading.Thread(target=lambda: (started(tmp_path), signal.raise_signal(sig)), daemon=True)
    # no collection while the signal may land: a dropped exception is the "dropped" case's, not chance's
    gc.disable()
    timer.start()
    try:
        runs, reason, transport, token = run(nodes, tmp_path, {n.ip: HANG for n in nodes})
    finally:
        gc.enable()
        for s, handler in saved.items():
            signal.signal(s, handler)
    timer.join(5)
    assert reason == ("interrupted" if sig == signal.SIGINT else "terminated (SIGTERM)")
    assert len(transport.stopped) == 2 and all(r.stopped == reason for r in runs)


def test_an_exception_here_stops_the_nodes_already_started(nodes, tmp_path):
    """Node 2's output file cannot be made (its folder is a file) after node 1 started: the
    error is raised, but only once node 1 was stopped."""
    (tmp_path / "blocker").write_text("")
    paths = {"127.0.0.2": str(tmp_path / "out" / "run.out"), "127.0.0.3": str(tmp_path / "blocker" / "run.out")}
    with pytest.raises(OSError):
        run(nodes, tmp_path, {n.ip: HANG for n in nodes}, out_path=lambda n: paths[n.ip])
    assert not with_token("t")  # (run's finally also checked the token of this run)


@pytest.mark.parametrize("shell", ["dash", "bash"])
def test_the_stop_script_stops_a_run_and_its_other_sessions_under_dash_and_bash(tmp_path, shell):
    """The stop script as `sh` is on the node (dash on Debian, bash elsewhere): SIGTERM to every
    process of the run, those in sessions of their own too; one that ignores it gets SIGKILL."""
    if not os.path.exists(f"/bin/{shell}"):
        pytest.skip(f"/bin/{shell} is not installed")
    token = f"s{os.getpid()}{shell}"
    env = dict(os.environ, **{TOKEN_VAR: token})
    proc = subprocess.Popen(
        ["setsid", "sh", "-c", "setsid sleep 300 & trap '' TERM; sleep 300 & wait"], env=env, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 10
        while len(with_token(token)) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        res = subprocess.run([f"/bin/{shell}", "-c", stop_script(str(tmp_path), token, 1)],
                             capture_output=True, text=True, timeout=30)  # fmt: skip
        assert res.returncode == 0 and "Illegal number" not in res.stderr, res.stderr
        assert f"{MARK} stopped " in res.stdout and f"{MARK} left" not in res.stdout, res.stdout
        assert stop_answer("n", res.stdout) is None
        proc.wait(timeout=10)
        deadline = time.monotonic() + 5
        while with_token(token) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not with_token(token)
    finally:
        for pid in with_token(token):
            os.kill(pid, signal.SIGKILL)


def _strings(tree: ast.AST) -> list:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_stopping_lives_in_the_transports_only():
    """By construction: `scancel` of a step only in slurm.py, the stop script only in ssh.py
    (run.py prints it for --dry-run), a `.stop(` of a transport only in session._stop; no
    `kill -SIG --` (dash rejects it) in any shell text of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = str(path.relative_to(PACKAGE))
        tree = ast.parse(path.read_text())
        text = "\n".join(_strings(tree))
        for bad in ("kill -TERM --", "kill -KILL --", "kill -INT --", "kill -9 --"):
            assert bad not in text, f"{rel}: `{bad}` in shell text (dash: Illegal number)"
        if "scancel" in _strings(tree) or any("--signal=" in s for s in _strings(tree)):
            assert rel == "fleet/slurm.py", f"{rel} cancels Slurm jobs or steps itself"
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, (ast.Name, ast.Attribute))]
        for call in calls:
            name = call.func.attr if isinstance(call.func, ast.Attribute) else call.func.id
            if name == "stop_script":
                assert rel in ("fleet/ssh.py", "fleet/run.py"), f"{rel} builds a stop script itself"
            if name == "stop" and isinstance(call.func, ast.Attribute) and rel.startswith("fleet/"):
                assert rel == "fleet/session.py", f"{rel} stops a node's run outside session._stop"
