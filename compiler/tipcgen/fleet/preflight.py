"""Before anything starts: reach every node within a bound, compare the shared files' sha256 with
this machine's, and (`--sync`) copy this machine's files over first. Nodes are checked at once;
one problem anywhere means nothing is started anywhere."""

from __future__ import annotations

import io
import re
import tarfile
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional

from tipcgen.fleet.bounded import SLACK, run_bounded
from tipcgen.fleet.node_doctor import probe_for, probe_script, verdicts
from tipcgen.fleet.nodes import Fleet, Node
from tipcgen.fleet.ssh import MARK, preflight_script, unpack_script
from tipcgen.fleet.transport import Transport
from tipcgen.run.digest import short

_DIGEST = re.compile(r"[0-9a-f]{64}\Z")


@dataclass
class NodeCheck:
    ip: str
    problems: list = field(default_factory=list)  # what --sync cannot fix (unreachable, no directory)
    differs: list = field(default_factory=list)  # shared files missing or different there (--sync fixes)
    missing: list = field(default_factory=list)  # their paths: absent there
    changed: list = field(default_factory=list)  # their paths: different there
    status_offset: int = 0  # the node's status log size before the run: this run's lines follow
    doctor: Optional[list] = None  # the words of the node's doctor answer (node_doctor.py)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.differs


def _answer(node: Node, fleet: Fleet, out: str, check: NodeCheck) -> dict:
    """The node's marker lines read into `check` (problems, status log offset); the files'
    digests by index. A node's login scripts may print anything: a marker line we did not
    write is a problem (refused), never a crash."""
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
        elif words[:1] == ["missing"] and words[1:] in (["setsid"], ["tar"], ["env-signals"]):
            what = {"setsid": "`setsid` (util-linux)", "tar": "`tar`"}.get(
                words[1], "`env --ignore-signal` (GNU coreutils 8.31 or later; the stop needs it)"
            )
            check.problems.append(f"node {node.ip}: {what} is not installed; the run needs it")
        elif len(words) == 3 and words[0] == "file" and _index(words[1], len(fleet.files)) is not None:
            i = int(words[1])
            if (words[2] != "-" and not _DIGEST.match(words[2])) or remote.setdefault(i, words[2]) != words[2]:
                check.problems.append(_odd_line(node, line))
        elif len(words) == 2 and words[0] == "statuslog" and _index(words[1], 1 << 62) is not None:
            check.status_offset = int(words[1])
        elif words[:1] in (["doctor"], ["nopython"], ["doctor-failed"]) and check.doctor is None:
            check.doctor = words
        elif words != ["ok"]:
            check.problems.append(_odd_line(node, line))
    return remote


def _index(word: str, end: int) -> Optional[int]:
    """`word` as a whole number below `end` (ASCII digits only), else None."""
    if not (word.isascii() and word.isdigit() and len(word) <= 20):
        return None
    return int(word) if int(word) < end else None


def _odd_line(node: Node, line: str) -> str:
    shown = repr(line[:200] + ("..." if len(line) > 200 else ""))
    return (
        f"node {node.ip}: its answer to the check has a line tipcgen did not write: {shown}; a login "
        f"script on the node printing lines that start with {MARK!r}? (nothing was started)"
    )


def _parse(node: Node, fleet: Fleet, out: str, check: NodeCheck, synced: bool = False) -> None:
    remote = _answer(node, fleet, out, check)
    if check.problems:
        return
    # After --sync a file that still differs is no case for --sync: the copy did not take.
    fix = (
        "--sync copied this machine's file there, yet the node still shows another; check its "
        "directory (permissions, a link to elsewhere, something rewriting it)"
        if synced
        else "run with --sync to copy this machine's files there"
    )
    for i, shared in enumerate(fleet.files):
        theirs = remote.get(i, "-")
        where = f"{node.dir.rstrip('/')}/{shared.path}"
        if theirs == "-":
            check.missing.append(shared.path)
            check.differs.append(f"node {node.ip}: {where} is missing (the {shared.why} this machine has); {fix}")
        elif theirs != shared.digest:
            check.changed.append(shared.path)
            check.differs.append(
                f"node {node.ip}: {where} differs from this machine's {shared.why} {shared.path} "
                f"(sha256 {short(shared.digest)} here, {short(theirs)} there); "
                + (fix if synced else f"{fix}, or make them equal")
            )


def check_node(fleet: Fleet, node: Node, opts: Transport, synced: bool = False, env: Sequence[tuple] = ()) -> NodeCheck:
    """Reach the node, compare the shared files, and (`env`: the run's environment there) run
    the doctor's checks with the config's interpreter."""
    check = NodeCheck(node.ip)
    probe = probe_for(node.plan, node.ip, env)
    extra = probe_script(probe) if probe else ""
    script = preflight_script(node.dir, [f.path for f in fleet.files], node.plan.status_log, extra)
    bound = opts.connect_timeout + SLACK
    code, out, err = run_bounded(opts.argv(node.ip, script), bound)
    if f"{MARK} ok" not in out and not any(ln.startswith(f"{MARK} nodir") for ln in out.splitlines()):
        check.problems.append(opts.failure(node.ip, code, err, bound))
        return check
    _parse(node, fleet, out, check, synced)
    if probe is not None and not any(ln.startswith(f"{MARK} nodir") for ln in out.splitlines()):
        check.problems += verdicts(node.ip, node.plan, probe, check.doctor, opts.connect_timeout)
    return check


def check_nodes(
    fleet: Fleet, opts: Transport, synced: bool = False, env: Optional[Callable[[Node], Sequence[tuple]]] = None
) -> list[NodeCheck]:
    with ThreadPoolExecutor(max_workers=len(fleet.nodes)) as pool:
        return list(pool.map(lambda n: check_node(fleet, n, opts, synced, env(n) if env else ()), fleet.nodes))


def sync_command(node: Node, opts: Transport) -> list[str]:
    """ssh unpacking `bundle()` (on its stdin) in the node's working copy."""
    return opts.argv(node.ip, unpack_script(node.dir), stdin=True)


def bundle(fleet: Fleet, only: Optional[set] = None) -> bytes:
    """This machine's shared files (those in `only`, when given) as a tar stream: file members
    only (tar creates their directories, and follows a directory link the node's copy has, as a
    copy would), scripts executable."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for shared in fleet.files:
            if only is not None and shared.path not in only:
                continue
            info = tarfile.TarInfo(shared.path)
            info.size = len(shared.data)
            info.mode = 0o755 if shared.path.endswith(".sh") else 0o644
            info.mtime = int(time.time())
            tar.addfile(info, io.BytesIO(shared.data))
    return buf.getvalue()


def sync_nodes(
    fleet: Fleet, opts: Transport, checks: Optional[dict] = None, say: Optional[Callable[[str, str], None]] = None
) -> list[str]:
    """Copy the shared files that differ (all, without `checks`) to every node at once, saying per
    node which it replaces and which it creates; the problems (empty: all copied)."""
    bound = opts.connect_timeout + SLACK

    def one(node: Node) -> list[str]:
        check = (checks or {}).get(node.ip)
        only = None if check is None else set(check.missing) | set(check.changed)
        if only is not None and not only:
            return []
        code, out, err = run_bounded(sync_command(node, opts), bound, bundle(fleet, only))
        if code == 0:
            if say is not None and check is not None:
                for verb, paths in (("replaced", check.changed), ("created", check.missing)):
                    if paths:
                        say(node.ip, f"--sync {verb} {', '.join(paths)} in {node.dir} (this machine's copy)")
            return []
        if f"{MARK} nodir" in out:
            return [
                f"node {node.ip}: no directory {node.dir} to copy the files into (--sync copies files, not the repo)"
            ]
        why = opts.failure(node.ip, code, err, bound)
        return [why.replace(f"{opts.name} failed", "copying the files (--sync) failed", 1)]

    with ThreadPoolExecutor(max_workers=len(fleet.nodes)) as pool:
        return [p for problems in pool.map(one, fleet.nodes) for p in problems]
