"""`tipcgen ARGS` in a fresh process without paying Python's imports for each one.

A test worker starts one *warm* process per worker: it imports every tipcgen module once, then
forks a child per call. The child is a new process (its own pid, cwd, environment, standard
streams, exit status) that runs `tipcgen.cli.main()` from a state no earlier call has touched, as
`python -m tipcgen.cli ARGS` would; only the imports are skipped (they were most of a call's time:
a `tipcgen build` of the bundled specs is ~1 s, 0.9 s of it imports and pydantic's model classes).

What a forked child does not have, the tests that need it get from `helpers.cli.TIPCGEN` (a real
exec): its own hash seed (determinism across runs), its own interpreter start (the entry point,
`PYTHON*` variables), a child of the test itself (signals, process trees, resource limits).

Run as a script by `Warm.start()`; never imported by tipcgen.
"""

from __future__ import annotations

import array
import atexit
import io
import json
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Optional

from helpers.machine import bound

_HEADER = struct.Struct("!I")
_NFDS = 3


def _send(sock: socket.socket, obj: object, fds: tuple[int, ...] = ()) -> None:
    data = json.dumps(obj).encode("utf-8")
    msg = _HEADER.pack(len(data)) + data
    if fds:
        sock.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.sendall(msg)


def _recv(sock: socket.socket, want_fds: int = 0) -> tuple[Optional[object], list[int]]:
    fds: list[int] = []
    buf = b""
    while len(buf) < _HEADER.size:
        if want_fds and not fds:
            data, anc, _flags, _addr = sock.recvmsg(4096, socket.CMSG_SPACE(want_fds * 4))
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    got = array.array("i")
                    got.frombytes(payload[: len(payload) - len(payload) % got.itemsize])
                    fds.extend(got)
        else:
            data = sock.recv(4096)
        if not data:
            return None, fds
        buf += data
    (size,) = _HEADER.unpack(buf[: _HEADER.size])
    buf = buf[_HEADER.size :]
    while len(buf) < size:
        data = sock.recv(size - len(buf))
        if not data:
            return None, fds
        buf += data
    return json.loads(buf.decode("utf-8")), fds


# ---------------------------------------------------------------- the warm process (server side)


def _child(sock: socket.socket, req: dict, fds: list[int]) -> None:
    """In the forked child: become `tipcgen ARGS` in the caller's cwd, environment and streams."""
    sock.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.environ.clear()
    os.environ.update(req["env"])
    os.chdir(req["cwd"])
    # The streams a fresh interpreter would open: UTF-8 (this interpreter's locale is C.UTF-8 or
    # coerced to it), stderr line-buffered and backslash-escaping, PYTHONUNBUFFERED honoured.
    unbuffered = bool(req["env"].get("PYTHONUNBUFFERED"))
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        open(1, "wb", closefd=False, buffering=0 if unbuffered else -1),  # noqa: SIM115
        encoding="utf-8",
        write_through=unbuffered,
    )
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        open(2, "wb", closefd=False, buffering=0),  # noqa: SIM115
        encoding="utf-8",
        errors="backslashreplace",
        line_buffering=True,
        write_through=True,
    )
    sys.argv = ["tipcgen", *req["args"]]
    code: int = 0
    try:
        from tipcgen.cli import main

        main()
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except KeyboardInterrupt:
        code = 128 + signal.SIGINT
    except BaseException:
        traceback.print_exc()
        code = 1
    # What an interpreter does on its way out: wait for non-daemon threads, run atexit, flush.
    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code & 0xFF)


def serve(fd: int) -> None:
    import importlib
    import pkgutil

    import tipcgen
    import tipcgen.cli  # noqa: F401

    # Every module, so a command's own lazy imports are warm too (`__main__` would run the app).
    for mod in pkgutil.walk_packages(tipcgen.__path__, "tipcgen."):
        if not mod.name.endswith("__main__"):
            importlib.import_module(mod.name)
    sock = socket.socket(fileno=fd)
    _send(sock, {"ready": os.getpid()})
    while True:
        req, fds = _recv(sock, want_fds=_NFDS)
        if req is None:
            return  # the test worker is gone
        assert isinstance(req, dict) and len(fds) == _NFDS, (req, fds)
        pid = os.fork()
        if pid == 0:
            try:
                _child(sock, req, fds)
            finally:
                os._exit(70)
        for fd in fds:
            os.close(fd)
        try:
            _send(sock, {"pid": pid})
            _, status = os.waitpid(pid, 0)
            _send(sock, {"status": status})
        except OSError:
            return  # the worker gave up on this call (a timeout) and closed its end


# ---------------------------------------------------------------- the test worker's side


class Warm:
    """The client: one warm process per test worker, (re)started on first use."""

    def __init__(self) -> None:
        self.sock: Optional[socket.socket] = None
        self.proc: Optional[subprocess.Popen] = None
        self.lock = threading.Lock()

    def start(self) -> None:
        ours, theirs = socket.socketpair()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(Path(__file__).parents[1]), env.get("PYTHONPATH")]))
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                "import sys; from helpers.warm import serve; serve(int(sys.argv[1]))",
                str(theirs.fileno()),
            ],
            pass_fds=[theirs.fileno()],
            stdin=subprocess.DEVNULL,
            env=env,
            cwd="/",
        )
        theirs.close()
        ours.settimeout(bound(120))  # importing tipcgen: seconds; a hang fails the call, not the tier
        try:
            hello, _ = _recv(ours)
        except TimeoutError:
            hello = None
        ours.settimeout(None)
        if not isinstance(hello, dict) or "ready" not in hello:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("the warm tipcgen process did not start")
        self.sock = ours

    def _stop(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def run(
        self,
        args: list[str],
        *,
        cwd: Path | str,
        env: Optional[dict] = None,
        timeout: float,
        input: Optional[str] = None,
    ) -> subprocess.CompletedProcess:
        with self.lock:
            if self.sock is None or self.proc is None or self.proc.poll() is not None:
                self.start()
            assert self.sock is not None
            return self._run(args, cwd=cwd, env=env, timeout=timeout, input=input)

    def _run(self, args, *, cwd, env, timeout, input) -> subprocess.CompletedProcess:
        assert self.sock is not None
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        if input is None:
            in_r, in_w = os.open(os.devnull, os.O_RDONLY), -1
        else:
            in_r, in_w = os.pipe()
        req = {
            "args": [str(a) for a in args],
            "cwd": str(Path(cwd).resolve()),
            "env": dict(os.environ if env is None else env),
        }
        try:
            _send(self.sock, req, (in_r, out_w, err_w))
        finally:
            for fd in (in_r, out_w, err_w):
                os.close(fd)
        reply, _ = _recv(self.sock)
        if not isinstance(reply, dict) or "pid" not in reply:
            self._stop()
            raise RuntimeError("the warm tipcgen process stopped")
        pid = reply["pid"]
        deadline = time.monotonic() + timeout
        chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
        sel = selectors.DefaultSelector()
        for fd in chunks:
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        if in_w >= 0:
            # stdin is small in these tests: written whole, then closed (EOF), like communicate()
            with open(in_w, "wb") as stdin:
                try:
                    stdin.write(input.encode("utf-8"))
                except BrokenPipeError:
                    pass
        try:
            while sel.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    os.kill(pid, signal.SIGKILL)
                    raise subprocess.TimeoutExpired([*TIPCGEN_NAME, *args], timeout)
                for key, _ in sel.select(left):
                    data = os.read(key.fd, 65536)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        sel.unregister(key.fd)
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                done, _ = _recv(self.sock)
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired([*TIPCGEN_NAME, *args], timeout) from None
            finally:
                self.sock.settimeout(None)
        except BaseException:
            self._stop()  # it may still wait on the child: a new one serves the next call
            raise
        finally:
            sel.close()
            for fd in chunks:
                os.close(fd)
        if not isinstance(done, dict) or "status" not in done:
            self._stop()
            raise RuntimeError("the warm tipcgen process stopped")
        status = done["status"]
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        # as subprocess.run(text=True) reads them: decoded, universal newlines
        out, err = (_text(b"".join(chunks[fd])) for fd in (out_r, err_r))
        return subprocess.CompletedProcess([*TIPCGEN_NAME, *args], code, out, err)


def _text(data: bytes) -> str:
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


TIPCGEN_NAME = ["tipcgen"]
WARM = Warm()
