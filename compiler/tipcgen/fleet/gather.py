"""Bring each node's logs home: `ssh node tar c` of its status log, step logs and
`log/workerlog.*`, unpacked here by Python's tarfile into `<log_dir>/nodes/<ip>/`.

A node's tar stream is untrusted: we take only the members we asked for (those names, as regular
files: no links, devices, absolute names or `..`), choose every local name ourselves (files under
the node's log directory keep their path below it, others their path from the repo root), and
stop reading past MAX_BYTES or MAX_MEMBERS, so a node cannot make us write outside its
directory or fill the disk. What we left out is reported."""

from __future__ import annotations

import contextlib
import fnmatch
import os
import posixpath
import signal
import subprocess
import tarfile
import threading
from collections.abc import Collection
from typing import Optional

from tipcgen.errors import UsageError
from tipcgen.fleet.bounded import SLACK, drain
from tipcgen.fleet.nodes import Node
from tipcgen.fleet.ssh import gather_script
from tipcgen.fleet.transport import Transport
from tipcgen.fsio import open_output

WORKER_LOGS = "log/workerlog.*"
MAX_BYTES = 1 << 30  # a node sending more than 1 GiB of logs is cut off
MAX_MEMBERS = 10_000  # paddle's launcher writes a workerlog per process: thousands is no real run
_CHUNK = 1 << 20


class TooMuch(Exception):
    """The node sent more than the bound: reading stopped (the partial file removed)."""


def node_dir(log_dir: str, ip: str) -> str:
    if not ip or ip in (".", "..") or "/" in ip or "\0" in ip:  # nodes.py admits host names and IPs only
        raise UsageError(f"node {ip!r}: not a name for a directory")
    return os.path.join(log_dir, "nodes", ip)


def gathered_paths(node: Node) -> list[str]:
    """The node's files we bring home, relative to its repo root: status log, step logs."""
    plan = node.plan
    paths = [plan.status_log] + [s.log for s in plan.steps if s.log]
    return list(dict.fromkeys(posixpath.normpath(p) for p in paths))


def wanted_names(node: Node) -> set:
    """The member names `tar c` gives the gathered paths (it drops a leading `/`)."""
    return {p.lstrip("/") for p in gathered_paths(node)}


def local_name(member: str, log_dir: str, wanted: Optional[Collection[str]] = None) -> Optional[str]:
    """Where a member lands below the node's directory, or None for a name we refuse (outside,
    or, given `wanted`, neither one of those names nor a worker log)."""
    name = posixpath.normpath(member)
    if name.startswith(("/", "../")) or name in (".", "..") or "\0" in name:
        return None
    worker_log = fnmatch.fnmatchcase(name, WORKER_LOGS) and name.count("/") == 1
    if wanted is not None and name not in wanted and not worker_log:
        return None
    prefix = posixpath.normpath(log_dir) + "/"
    if name.startswith(prefix):
        name = name[len(prefix) :]
    return name


def _why_not(member: tarfile.TarInfo, name: Optional[str]) -> Optional[str]:
    if not member.isreg():
        kind = "a link" if member.issym() or member.islnk() else "a device" if member.isdev() else "not a file"
        return f"{member.name!r} ({kind})"
    if name is None:
        return f"{member.name!r} (a name tipcgen did not ask for)"
    return None


def unpack(
    stream,
    dest: str,
    log_dir: str,
    got: list,
    wanted: Optional[Collection[str]] = None,
    limit: int = MAX_BYTES,
    members: int = MAX_MEMBERS,
) -> list[str]:
    """Unpack a node's tar stream into `dest`; the members left out, each with why. TooMuch
    past `limit` bytes or `members` members."""
    total, refused = 0, []
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for count, member in enumerate(tar):
            if count >= members:
                raise TooMuch(f"more than {members} files")
            name = local_name(member.name, log_dir, wanted)
            why = _why_not(member, name)
            if why or name is None:
                refused.append(why or repr(member.name))
                continue
            path = os.path.join(dest, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            src = tar.extractfile(member)
            if src is None:
                continue
            if os.path.islink(path):  # two members of one name: never write through a link
                os.unlink(path)
            with open_output(path) as out:
                while chunk := src.read(_CHUNK):
                    total += len(chunk)
                    if total > limit:
                        out.close()
                        os.unlink(path)
                        raise TooMuch(f"more than {limit} bytes of logs (stopped at {name})")
                    out.write(chunk)
            got.append(name)
    return refused


def _kill(proc: subprocess.Popen) -> None:
    """ssh and whatever it started (a ProxyCommand): they hold the pipes we wait on."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _rest(stream) -> None:
    """Read what follows the archive's end (tar pads it to a record); TooMuch when it goes on."""
    extra = 0
    while chunk := stream.read1(1 << 16):
        extra += len(chunk)
        if extra > _CHUNK:
            raise TooMuch(f"more than {_CHUNK} bytes after the end of its log archive")


def node_gather_script(node: Node) -> str:
    """The status log always (this run's lines are read from its old size on); step and
    worker logs only when this run wrote them."""
    paths = gathered_paths(node)
    return gather_script(node.dir, paths[1:], [WORKER_LOGS], always=paths[:1])


def gather_node(node: Node, opts: Transport, dest: str, timeout: float) -> tuple[list[str], Optional[str], bool]:
    """(local names of the files copied, a problem or None, whether the node was reached).
    Bounded by `timeout` seconds."""
    script = node_gather_script(node)
    proc = subprocess.Popen(
        opts.argv(node.ip, script),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    got: list = []
    errors: list = []
    refused: list = []
    too_much: list = []
    stderr: list = []
    err_reader = drain(proc.stderr, stderr)

    def work() -> None:
        try:
            refused.extend(unpack(proc.stdout, dest, node.plan.log_dir, got, wanted_names(node)))
            _rest(proc.stdout)
        except TooMuch as exc:
            too_much.append(str(exc))
            _kill(proc)  # nothing more is read: the rest of the stream must not pile up here
        except (tarfile.TarError, OSError, EOFError, ValueError) as exc:  # a broken archive, never a crash
            errors.append(str(exc))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        _kill(proc)
        worker.join(SLACK)
    try:
        proc.wait(timeout=SLACK)
    except subprocess.TimeoutExpired:
        _kill(proc)
        proc.wait()
    err_reader.join(SLACK)
    err = b"".join(stderr).decode("utf-8", "replace")
    left_out = f"; left out {len(refused)} member(s) of its archive: {', '.join(refused[:5])}" if refused else ""
    if too_much:
        return got, f"node {node.ip}: it sent {too_much[0]}; the rest was not gathered{left_out}", True
    if proc.returncode != 0:
        # nothing came back at all: the transport did not get through (or the node is gone)
        lost = not got
        return got, opts.failure(node.ip, None if worker.is_alive() else proc.returncode, err, timeout), not lost
    if errors and got:
        return got, f"node {node.ip}: the logs arrived broken ({errors[0]}){left_out}", True
    if refused:
        msg = f"node {node.ip}: left out {len(refused)} member(s) of its log archive: {', '.join(refused[:5])}"
        return got, msg, True
    return got, None, True
