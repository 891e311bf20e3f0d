"""Before anything starts: reach every node within a bound, compare the shared files' sha256 with
this machine's, and (`--sync`) copy this machine's files over first. Nodes are checked at once;
one problem anywhere means nothing is started anywhere."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Optional

from tipcgen.fleet.nodes import Fleet, Node
from tipcgen.fleet.ssh import MARK, SshOptions, mkdir_script, preflight_script, scp_argv, ssh_argv
from tipcgen.run.digest import short

# Seconds an ssh command may take beyond ssh's own ConnectTimeout (authentication, a few sha256s).
SLACK = 20.0


@dataclass
class NodeCheck:
    ip: str
    problems: list = field(default_factory=list)  # what --sync cannot fix (unreachable, no directory)
    differs: list = field(default_factory=list)  # shared files missing or different there (--sync fixes)
    status_offset: int = 0  # the node's status log size before the run: this run's lines follow

    @property
    def ok(self) -> bool:
        return not self.problems and not self.differs


def run_bounded(argv: Sequence[str], timeout: float) -> tuple[Optional[int], str, str]:
    """(exit code or None when it outlived `timeout`, stdout, stderr); a late one is killed."""
    proc = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def ssh_failure(ip: str, code: Optional[int], err: str, bound: float) -> str:
    """One sentence for an ssh command that did not get through."""
    if code is None:
        return (
            f"node {ip}: no answer within {bound:g} s; check that it is up and its sshd reachable "
            "from here, or raise --connect-timeout"
        )
    last = next((ln.strip() for ln in reversed(err.splitlines()) if ln.strip()), f"ssh exited {code}")
    return f"node {ip}: ssh failed: {last}"


def _parse(node: Node, fleet: Fleet, out: str, check: NodeCheck) -> None:
    remote: dict = {}
    for line in out.splitlines():
        if not line.startswith(MARK):
            continue
        words = line[len(MARK) :].split()
        if words == ["nodir"]:
            check.problems.append(
                f"node {node.ip}: no directory {node.dir} (its working copy of the model repo); "
                f"set --remote-dir, or --node-dir {node.ip}=DIR"
            )
        elif words == ["nosetsid"]:
            check.problems.append(f"node {node.ip}: `setsid` (util-linux) is not installed; the run needs it")
        elif words[:1] == ["file"] and len(words) == 3:
            remote[int(words[1])] = words[2]
        elif words[:1] == ["statuslog"] and len(words) == 2 and words[1].isdigit():
            check.status_offset = int(words[1])
    if check.problems:
        return
    for i, shared in enumerate(fleet.files):
        theirs = remote.get(i, "-")
        where = f"{node.dir.rstrip('/')}/{shared.path}"
        if theirs == "-":
            check.differs.append(
                f"node {node.ip}: {where} is missing (the {shared.why} this machine has); "
                "run with --sync to copy this machine's files there"
            )
        elif theirs != shared.digest:
            check.differs.append(
                f"node {node.ip}: {where} differs from this machine's {shared.why} {shared.path} "
                f"(sha256 {short(shared.digest)} here, {short(theirs)} there); run with --sync to copy "
                "this machine's files there, or make them equal"
            )


def check_node(fleet: Fleet, node: Node, opts: SshOptions) -> NodeCheck:
    check = NodeCheck(node.ip)
    script = preflight_script(node.dir, [f.path for f in fleet.files], node.plan.status_log)
    bound = opts.connect_timeout + SLACK
    code, out, err = run_bounded(ssh_argv(opts, node.ip, script), bound)
    if f"{MARK} ok" not in out and not any(ln.startswith(f"{MARK} nodir") for ln in out.splitlines()):
        check.problems.append(ssh_failure(node.ip, code, err, bound))
        return check
    _parse(node, fleet, out, check)
    return check


def check_nodes(fleet: Fleet, opts: SshOptions) -> list[NodeCheck]:
    with ThreadPoolExecutor(max_workers=len(fleet.nodes)) as pool:
        return list(pool.map(lambda n: check_node(fleet, n, opts), fleet.nodes))


def sync_commands(fleet: Fleet, node: Node, opts: SshOptions, staging: str) -> list[list[str]]:
    """mkdir of the destination directories, then one scp per directory (files staged locally)."""
    by_dir: dict = {}
    for shared in fleet.files:
        parent = os.path.dirname(shared.path)
        by_dir.setdefault(parent, []).append(os.path.join(staging, shared.path))
    base = node.dir.rstrip("/")
    cmds = [ssh_argv(opts, node.ip, mkdir_script(node.dir, [d or "." for d in by_dir]))]
    for parent, sources in by_dir.items():
        cmds.append(scp_argv(opts, sources, node.ip, f"{base}/{parent}" if parent else base))
    return cmds


def stage(fleet: Fleet, staging: str) -> None:
    """Write this machine's shared files under `staging` (scp copies from there, modes kept)."""
    for shared in fleet.files:
        path = os.path.join(staging, shared.path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(shared.data)
        os.chmod(path, 0o755 if shared.path.endswith(".sh") else 0o644)


def sync_nodes(fleet: Fleet, opts: SshOptions) -> list[str]:
    """Copy the shared files to every node at once; the problems (empty: all copied)."""
    bound = opts.connect_timeout + SLACK

    def one(node: Node, staging: str) -> list[str]:
        for argv in sync_commands(fleet, node, opts, staging):
            code, _out, err = run_bounded(argv, bound)
            if code != 0:
                return [ssh_failure(node.ip, code, err, bound).replace("ssh failed", f"{argv[0]} failed", 1)]
        return []

    with tempfile.TemporaryDirectory(prefix="tipcgen-fleet-") as staging:
        stage(fleet, staging)
        with ThreadPoolExecutor(max_workers=len(fleet.nodes)) as pool:
            return [p for problems in pool.map(lambda n: one(n, staging), fleet.nodes) for p in problems]
