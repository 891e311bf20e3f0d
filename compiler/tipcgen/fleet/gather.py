"""Bring each node's logs home: `ssh node tar c` of its status log, step logs and
`log/workerlog.*`, unpacked here by Python's tarfile into `<log_dir>/nodes/<ip>/`.

We choose every member's local name ourselves (files under the node's log directory keep their
path below it, others their path from the repo root) and write regular files only, so a node
cannot make us write outside its directory."""

from __future__ import annotations

import os
import posixpath
import shutil
import subprocess
import tarfile
import threading
from typing import Optional

from tipcgen.fleet.nodes import Node
from tipcgen.fleet.preflight import SLACK, ssh_failure
from tipcgen.fleet.ssh import SshOptions, gather_script, ssh_argv

WORKER_LOGS = "log/workerlog.*"
MAX_BYTES = 1 << 30  # a node sending more than 1 GiB of logs is cut off


def node_dir(log_dir: str, ip: str) -> str:
    return os.path.join(log_dir, "nodes", ip)


def gathered_paths(node: Node) -> list[str]:
    """The node's files we bring home, relative to its repo root: status log, step logs."""
    plan = node.plan
    paths = [plan.status_log] + [s.log for s in plan.steps if s.log]
    return list(dict.fromkeys(posixpath.normpath(p) for p in paths))


def local_name(member: str, log_dir: str) -> Optional[str]:
    """Where a member lands below the node's directory, or None for a name we refuse."""
    name = posixpath.normpath(member)
    if name.startswith(("/", "../")) or name in (".", ".."):
        return None
    prefix = posixpath.normpath(log_dir) + "/"
    if name.startswith(prefix):
        name = name[len(prefix) :]
    return name


def _unpack(stream, dest: str, log_dir: str, got: list) -> None:
    total = 0
    with tarfile.open(fileobj=stream, mode="r|") as tar:
        for member in tar:
            name = local_name(member.name, log_dir)
            if not member.isfile() or name is None:
                continue
            total += member.size
            if total > MAX_BYTES:
                break
            path = os.path.join(dest, *name.split("/"))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            src = tar.extractfile(member)
            if src is None:
                continue
            with open(path, "wb") as out:
                shutil.copyfileobj(src, out)
            got.append(name)


def gather_node(node: Node, opts: SshOptions, dest: str, timeout: float) -> tuple[list[str], Optional[str]]:
    """(local names of the files copied, a problem or None). Bounded by `timeout` seconds."""
    script = gather_script(node.dir, gathered_paths(node), [WORKER_LOGS])
    proc = subprocess.Popen(
        ssh_argv(opts, node.ip, script),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    got: list = []
    errors: list = []

    def work() -> None:
        try:
            _unpack(proc.stdout, dest, node.plan.log_dir, got)
        except (tarfile.TarError, OSError) as exc:
            errors.append(str(exc))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        proc.kill()
        worker.join(SLACK)
    try:
        _out, err = proc.communicate(timeout=SLACK)
    except subprocess.TimeoutExpired:
        proc.kill()
        _out, err = proc.communicate()
    if proc.returncode != 0:
        return got, ssh_failure(node.ip, None if worker.is_alive() else proc.returncode, err.decode(), timeout)
    if errors and got:
        return got, f"node {node.ip}: the logs arrived broken ({errors[0]})"
    return got, None
