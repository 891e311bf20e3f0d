"""The one way tipcgen runs a repo's own scripts (migrate's runner runs, `import --prepare`'s and
migrate's prepare.sh traces, the generated prepare.sh's listing): `sandboxed_run`.

    ran = sandboxed_run(["bash", "test_tipc/prepare.sh", cfg, mode], scratch=tmp, cwd=tmp / "repo",
                        env={"TIPC_TRACE": ...}, timeout=120)
    ran.returncode       # None: killed at the timeout, with every process it started
    ran.tail("stderr")   # the end of its output (streamed to a bounded file, never held whole)

The sandbox is bubblewrap (`bwrap`, Debian's `bubblewrap`), chosen over util-linux's `unshare`
because it states the whole file system view declaratively, drops every capability, runs its own
init as pid 1 of the new pid namespace and reports that pid (--info-fd): killing it ends the
namespace, so the whole process tree dies at the timeout, orphans (setsid, double fork) included.
`unshare` would need a mount script of our own to get the same view. What a script sees:

- new user, mount, pid, network, ipc, uts and cgroup namespaces; no capabilities; no nested user
  namespace; a new session (it cannot reach the terminal);
- the root file system read-only; the scratch directory the only writable place (plus a private
  /tmp, /dev and the caller's HOME hidden under empty tmpfs, all gone with the run);
- no network: only its own loopback;
- a cleared environment: the system PATH, HOME in the scratch, C.UTF-8, plus what the caller
  passes (its shims' directory first on PATH, its record file);
- stdout and stderr streamed into files in the scratch, each bounded (OUT_LIMIT; the rest is
  counted and dropped, and the result says so).

Where the sandbox cannot be made (no bwrap; a container without user namespaces), `require` and
`sandboxed_run` raise SandboxUnavailable, which names why and `--no-sandbox`: inside `unsandboxed()`
(the CLI's --no-sandbox) the same call runs the command for real, with the same environment,
bounds and timeout, its process group killed at the end (a process that leaves its group survives).
tests/test_sandbox.py fails when another module of the package starts a process any other way than
through here or the executors that run the user's own commands on purpose.
"""

from __future__ import annotations

import contextlib
import functools
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from tipcgen.errors import TipcError, UsageError
from tipcgen.fsio import open_temp
from tipcgen.inputs import parse_json, read_bytes

DEFAULT_TIMEOUT = 120.0  # seconds one run of a repo's script may take (migrate's and import's --timeout)
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
OUT_LIMIT = 1 << 20  # bytes of each stream kept in its file
TAIL = 8192  # bytes of each stream's end kept besides (the end of a long output says why it failed)
# After the command ended (or was killed): how long its output pipes may stay open. Sandboxed, the
# namespace is gone and they close at once; unsandboxed, an escaped orphan may hold them.
DRAIN_GRACE = 1.0
# Directories whose masking would hide the programs the scripts run: HOME is not masked over them.
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc")


class SandboxUnavailable(UsageError):
    """The sandbox cannot be made here: the message says why and names --no-sandbox."""


@dataclass
class Ran:
    """What one run did. returncode None: it was killed at `timeout` seconds."""

    returncode: Optional[int]
    elapsed: float
    sandboxed: bool
    stdout: bytes = b""  # the first OUT_LIMIT bytes (what its file holds)
    stderr: bytes = b""
    tails: dict = field(default_factory=dict)  # stream -> its last TAIL bytes
    dropped: dict = field(default_factory=dict)  # stream -> bytes past OUT_LIMIT, not kept

    @property
    def timed_out(self) -> bool:
        return self.returncode is None

    def tail(self, stream: str, chars: int = 4000) -> str:
        """The end of `stream` ("stdout"/"stderr") as text, with a note when its file was cut."""
        text = self.tails.get(stream, b"").decode("utf-8", "replace")[-chars:]
        lost = self.dropped.get(stream, 0)
        return f"[{stream}: {lost} bytes past the first {OUT_LIMIT} not kept]\n{text}" if lost else text


def read_left(path, limit: int = 16 << 20) -> bytes:
    """A file a run left in its scratch, at most `limit` bytes, without following a link the run
    made (it could point at any file the user can read): b"" for a link, a FIFO or nothing."""
    path = os.fspath(path)
    try:
        return read_bytes(path, limit, tree=os.path.dirname(path) or ".", what="a file the run left", links=False)[
            :limit
        ]
    except TipcError:
        return b""


# ---- whether the sandbox can be made


_unsandboxed = False
_probed: dict = {}  # bwrap path -> why it cannot be used ("" : it can)
_probe_lock = threading.Lock()


@contextlib.contextmanager
def unsandboxed() -> Iterator[None]:
    """--no-sandbox: inside, sandboxed_run runs its commands for real (the scripts can do anything
    the user can). Process-wide (the runs' worker threads see it), restored on leaving."""
    global _unsandboxed
    before, _unsandboxed = _unsandboxed, True
    try:
        yield
    finally:
        _unsandboxed = before


def enabled() -> bool:
    return not _unsandboxed


def require() -> None:
    """Nothing when the sandbox can be made (or --no-sandbox is on); else SandboxUnavailable.
    The answer is found once per process and bwrap program."""
    if _unsandboxed:
        return
    _bwrap()


def _bwrap() -> str:
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable(_refusal("bwrap (Debian package bubblewrap) is not installed"))
    with _probe_lock:
        if found not in _probed:
            _probed[found] = _probe(found)
    why = _probed[found]
    if why:
        raise SandboxUnavailable(_refusal(why))
    return found


def _probe(bwrap: str) -> str:
    """'' when `bwrap` makes the sandbox and runs `true` in it; else what went wrong."""
    with tempfile.TemporaryDirectory(prefix="tipcgen-sandbox-probe-") as tmp:
        argv = [bwrap, *_view(tmp, tmp, {"PATH": SYSTEM_PATH}), "--", "true"]
        try:
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{bwrap} could not be run ({exc})"
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{bwrap} exited {done.returncode}" + (f": {said[-1][:300]}" if said else "")
    return ""


def _refusal(why: str) -> str:
    return (
        f"tipcgen: cannot make the sandbox that the repo's scripts run in: {why}. It needs bubblewrap "
        "(`apt-get install bubblewrap`) and user namespaces, which some containers forbid "
        "(docker: --security-opt seccomp=unconfined, or sysctl user.max_user_namespaces > 0). "
        "Or pass --no-sandbox to run the scripts for real, with your rights, files and network: "
        "only on scripts you trust"
    )


# ---- running


def _view(scratch: str, cwd: str, env: dict) -> list[str]:
    """bwrap's options: the namespaces, the file system view, the environment."""
    opts = [
        *("--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"),
        *("--die-with-parent", "--new-session"),
        *("--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"),
    ]
    home = os.path.realpath(os.environ.get("HOME") or "/")
    if home != "/" and os.path.isdir(home) and not any(_within(d, home) for d in _SYSTEM_DIRS):
        opts += ["--tmpfs", home]  # the caller's files (keys, tokens) are not read into a report
    opts += ["--bind", scratch, scratch, "--chdir", cwd, "--clearenv"]
    for key, value in env.items():
        opts += ["--setenv", key, value]
    return opts


def _within(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def sandboxed_run(
    argv: Sequence[str],
    *,
    scratch: Path,
    cwd: Path,
    env: dict,
    timeout: float,
    out_limit: int = OUT_LIMIT,
) -> Ran:
    """Run `argv` in `cwd` (inside `scratch`, the only place it may write) in the sandbox, with
    the environment: PATH=SYSTEM_PATH, HOME=<scratch>/home, TMPDIR=/tmp, LANG=C.UTF-8, then `env`.
    Ends at `timeout` seconds with every process it started."""
    root = os.path.realpath(scratch)
    here = os.path.realpath(cwd)
    if not _within(here, root):
        raise ValueError(f"sandboxed_run: {cwd} is not inside the scratch directory {scratch}")
    home = os.path.join(root, "home")
    os.makedirs(home, exist_ok=True)
    full = {"PATH": SYSTEM_PATH, "HOME": home, "TMPDIR": "/tmp", "LANG": "C.UTF-8", **env}
    if _unsandboxed:
        return _run(list(argv), here, full, None, timeout, out_limit, root)
    return _run(list(argv), here, full, _bwrap(), timeout, out_limit, root)


@functools.lru_cache(maxsize=1)
def machine_arch() -> str:
    """What `uname -i` prints on this machine (upstream's device wrappers test it; GNU coreutils
    prints `unknown` where the distribution does not patch it, so no Python call can stand in for
    it): asked in the sandbox, as every program tipcgen starts outside an executor."""
    with tempfile.TemporaryDirectory(prefix="tipcgen-arch-") as tmp:
        ran = sandboxed_run(["uname", "-i"], scratch=Path(tmp), cwd=Path(tmp), env={}, timeout=30)
    if ran.returncode != 0:
        raise TipcError(f"`uname -i` failed (exit {ran.returncode}): {ran.tail('stderr', 400).strip()}")
    return ran.tail("stdout", 200).strip()


class _Sink:
    """One output stream: the first `limit` bytes to a file in the scratch, the last TAIL in memory."""

    def __init__(self, directory: str, name: str, limit: int):
        self.file = open_temp(
            directory, f".tipcgen-{name}-"
        )  # read back through this fd: the script may replace the path
        self.limit, self.kept, self.dropped, self.tail = limit, 0, 0, b""

    def write(self, data: bytes) -> None:
        room = self.limit - self.kept
        if room > 0:
            self.file.write(data[:room])
            self.kept += min(room, len(data))
        self.dropped += max(0, len(data) - max(room, 0))
        self.tail = (self.tail + data)[-TAIL:]

    def close(self) -> bytes:
        with self.file:
            self.file.seek(0)
            return self.file.read(self.limit)


def _run(argv: list, cwd: str, env: dict, bwrap: Optional[str], timeout: float, limit: int, scratch: str) -> Ran:
    info_r = info_w = -1
    if bwrap is not None:
        info_r, info_w = os.pipe()
        cmd = [bwrap, *_view(scratch, cwd, env), "--info-fd", str(info_w), "--", *argv]
    else:
        cmd = argv
    sinks = {"stdout": _Sink(scratch, "stdout", limit), "stderr": _Sink(scratch, "stderr", limit)}
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env if bwrap is None else {},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own group: killed as one, away from the terminal's signals
            pass_fds=(info_w,) if bwrap is not None else (),
        )
    finally:
        if info_w >= 0:
            os.close(info_w)
    pid1 = _pid1(info_r) if bwrap is not None else None
    try:
        code = _pump(proc, sinks, start + timeout, bwrap is not None)
    finally:
        if proc.poll() is None:  # interrupted (^C): nothing of it outlives this call either
            _kill(proc, bwrap is not None)
        proc.wait()
        if pid1 is not None:
            _wait_gone(*pid1)
    elapsed = time.monotonic() - start
    out, err = sinks["stdout"].close(), sinks["stderr"].close()
    return Ran(
        code,
        elapsed,
        bwrap is not None,
        out,
        err,
        {k: s.tail for k, s in sinks.items()},
        {k: s.dropped for k, s in sinks.items() if s.dropped},
    )


def _pid1(info_r: int) -> Optional[tuple[int, bytes]]:
    """(pid as this process sees it, start time) of pid 1 of the sandbox's pid namespace, from
    bwrap's --info-fd (bwrap closes it before the command starts); None when bwrap failed first."""
    data = b""
    try:
        while True:
            chunk = os.read(info_r, 4096)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(info_r)
    try:
        pid = parse_json(data or b"{}", "bwrap --info-fd", dict, limit=4096).get("child-pid")
    except TipcError:
        return None
    if not isinstance(pid, int) or pid <= 1:
        return None
    started = _start_time(pid)
    return (pid, started) if started is not None else None


def _start_time(pid: int) -> Optional[bytes]:
    """Field 22 of /proc/PID/stat (when it started: tells a reused pid apart); None: gone or a zombie."""
    try:
        raw = read_bytes(f"/proc/{pid}/stat", 4096, tree="/proc", what="a process's status")
        fields = raw.rsplit(b")", 1)[1].split()
    except (TipcError, IndexError):
        return None
    return None if fields[0] in (b"Z", b"X") else fields[19]


def _wait_gone(pid: int, started: bytes) -> None:
    """Until pid 1 of the sandbox has ended. Its parent, bwrap, was killed: the kernel kills it
    (bwrap's --die-with-parent), and its end waits for every other process of its namespace."""
    stop = time.monotonic() + 10
    while _start_time(pid) == started and time.monotonic() < stop:
        time.sleep(0.005)


def _pump(proc: subprocess.Popen, sinks: dict, deadline: float, sandboxed: bool) -> Optional[int]:
    """Stream both pipes into their sinks until the command ends (its exit code) or the deadline
    passes (None: then it is killed); then drain what is left for at most DRAIN_GRACE."""
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, sinks["stdout"])
    sel.register(proc.stderr, selectors.EVENT_READ, sinks["stderr"])
    code: Optional[int] = None
    ended: Optional[float] = None
    try:
        while sel.get_map():
            now = time.monotonic()
            if ended is None and proc.poll() is not None:
                ended, code = now, proc.returncode
            elif ended is None and now >= deadline:
                _kill(proc, sandboxed)
                ended = now
            if ended is not None and now - ended > DRAIN_GRACE:
                break  # unsandboxed: an orphan that left the group holds the pipes
            wait = 0.05 if ended is not None else min(0.05, max(deadline - now, 0.001))
            for key, _mask in sel.select(wait):
                data = os.read(key.fd, 65536)
                if data:
                    key.data.write(data)
                else:
                    sel.unregister(key.fileobj)
        if ended is None:  # both pipes closed: the command is ending
            try:
                code = proc.wait(timeout=max(deadline - time.monotonic(), 0.001))
            except subprocess.TimeoutExpired:
                _kill(proc, sandboxed)
                code = None
    finally:
        sel.close()
        proc.stdout.close()
        proc.stderr.close()
    return code


def _kill(proc: subprocess.Popen, sandboxed: bool) -> None:
    """Only while `proc` is not reaped (its pid cannot be another's). Sandboxed: bwrap, whose
    death kills pid 1 of the namespace and so every process in it; else the command's group."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if sandboxed:
            proc.kill()
        else:
            os.killpg(proc.pid, signal.SIGKILL)
