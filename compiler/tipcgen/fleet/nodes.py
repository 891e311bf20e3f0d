"""The fleet of a suite: its nodes (from the multi-node topology), each node's working directory
and Plan, and the files every node must hold byte for byte (compared by sha256, sent by --sync).

Paths on the nodes are this repo root's relative paths under each node's working directory.
"""

from __future__ import annotations

import ipaddress
import os
import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

from tipcgen.errors import TipcError, UsageError
from tipcgen.fleet.ssh import PREPARE, RUNNER
from tipcgen.inputs import MAX_FILE_BYTES, read_bytes
from tipcgen.plan.steps import Plan
from tipcgen.run.digest import bytes_digest

COMMON = "test_tipc/common_func.sh"
# The run copy of the config (fleet --via slurm) is <log dir>/nodes/<this><config file name>.
RUN_COPY_PREFIX = "run_copy."


@dataclass(frozen=True)
class SharedFile:
    path: str  # relative to the repo root, the same on every node
    data: bytes  # this machine's bytes (for a spec: compiled from it)
    why: str  # what it is, for messages ("config", "spec", "runner", ...)
    written: bool = False  # made for this run (the run copy): written here before the preflight

    @property
    def digest(self) -> str:
        return bytes_digest(self.data)


@dataclass(frozen=True)
class Node:
    ip: str
    dir: str  # its working copy (the repo root there)
    plan: Plan  # the suite as that node runs it (its TIPC_NODE_IP, the fleet's port)


@dataclass(frozen=True)
class Fleet:
    source: str
    mode: str
    config: str  # what the nodes' bash gets, relative to the repo root
    nodes: tuple  # Node, trainer 0 first
    files: tuple  # SharedFile
    start_port: int
    # what ran, as records name it (check.source.what_ran: the spec's suite, the file given)
    ran: Optional[dict] = None

    @property
    def plan(self) -> Plan:
        return self.nodes[0].plan


def suite_nodes(plan: Plan, source: str) -> list[str]:
    """topology_ips, or a UsageError when the suite has no multi-node topology."""
    ips = topology_ips(plan)
    if len(ips) < 2:
        raise UsageError(
            f"{source}: the suite has no multi-node topology (a gpu_list entry `ip1,ip2;...`, in a spec "
            "`{ips: [...], gpus: [...]}` or `{ips: [...], cpus: N}`); tipcgen fleet has no nodes to run on"
        )
    return ips


def topology_ips(plan: Plan) -> list[str]:
    """The nodes of the plan's multi-node trains (their `--ips=`), in order, trainer 0 first."""
    ips: list[str] = []
    for step in plan.steps:
        if step.kind != "train" or step.nodes < 2:
            continue
        for arg in step.argv or ():
            if arg.startswith("--ips="):
                ips.extend(ip for ip in arg[len("--ips=") :].split(",") if ip and ip not in ips)
    return ips


_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)\Z")


def name_problem(name: str) -> Optional[str]:
    """Why `name` cannot be a node, or None for an IPv4/IPv6 address or a DNS host name. A node
    name is the ssh host (so never an option, `-o...`) and the name of the local directory its
    logs land in (so never `..`, a `/` or a control character)."""
    try:
        ipaddress.ip_address(name)
    except ValueError:
        pass
    else:
        return "a scoped IPv6 address (`%`)" if "%" in name else None
    from tipcgen.spec.ir import is_placeholder_ip

    if is_placeholder_ip(name):
        return "a placeholder the config leaves for you: put your nodes' addresses in gpu_list (a spec: its topology)"
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.match(label) for label in labels):
        return "not an IP address or host name (letters, digits, `-` and `.` between labels)"
    if all(label.isdigit() for label in labels):
        return "not an IPv4 address"
    return None


def _where(source: str, name: str) -> str:
    """`source:line:col` of `name` on the config's gpu_list line (a spec's IPs are validated
    with the spec), else `source`."""
    if not os.path.isfile(source):
        return source
    try:
        text = read_bytes(source, what="a config").decode("utf-8", "replace")
    except TipcError:
        return source
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("gpu_list") and name in line:
            return f"{source}:{number}:{line.index(name) + 1}"
    return source


def check_names(source: str, ips: Sequence[str]) -> None:
    """UsageError naming the first of `ips` (a config's gpu_list) that is no IP address or host
    name; doctor probes them, fleet uses them as ssh hosts and as local directory names."""
    for ip in ips:
        why = name_problem(ip)
        if why:
            raise UsageError(
                f"{_where(source, ip)}: error: gpu_list names node {ip!r}: {why}; a node is an IP address "
                "or a host name (tipcgen fleet uses it as the ssh host and as the directory nodes/<name>/ of its logs)"
            )


def _relative(root: str, path: str) -> Optional[str]:
    """`path` relative to `root` ("a/b"), or None when it lies outside."""
    rel = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    if rel == os.curdir or rel.startswith(os.pardir + os.sep) or rel == os.pardir:
        return None
    return rel.replace(os.sep, "/")


def _read(path: str, tree: Optional[str] = None) -> bytes:
    """A file fleet sends to the nodes, read through the gate (inside its tree, bounded)."""
    data = read_bytes(path, tree=tree, what="a file sent to the nodes")
    if len(data) > MAX_FILE_BYTES:
        raise UsageError(f"{path}: error: more than {MAX_FILE_BYTES} bytes; fleet sends configs and specs, not data")
    return data


def _config_files(source: str, root: str, prepare: bool) -> tuple[str, list[SharedFile]]:
    rel = _relative(root, source)
    if rel is None:
        raise UsageError(
            f"{source}: the config must lie in the repo root {root} (every node reads it at the same "
            "relative path in its working copy); run tipcgen fleet from the model repo's root"
        )
    files = [SharedFile(rel, _read(source), "config")]
    for path, why in ((RUNNER, "runner"), (COMMON, "runner"), *([(PREPARE, "prepare")] if prepare else [])):
        if os.path.isfile(os.path.join(root, path)):
            files.append(SharedFile(path, _read(os.path.join(root, path), root), why))
    return rel, files


def _spec_files(source: str, suite: Optional[str], root: str, prepare: bool) -> tuple[str, list[SharedFile]]:
    from tipcgen.check.spec import load_spec, pick_suite
    from tipcgen.emit.files import build_files

    spec = load_spec(source)
    name = pick_suite(spec, suite, source)
    built = build_files(spec)
    config = spec.config_path(spec.suites[name].file)
    files = [SharedFile(config, built[config], "config")]
    rel = _relative(root, source)
    if rel is not None:  # a spec kept in the model repo is compared too; one elsewhere only compiled
        files.append(SharedFile(rel, _read(source), "spec"))
    wanted = [RUNNER, COMMON, *([PREPARE] if prepare else [])]
    files += [SharedFile(p, built[p], "prepare" if p == PREPARE else "runner") for p in wanted]
    return config, files


def suite_files(source: str, suite: Optional[str], root: str, prepare: bool) -> tuple[str, list[SharedFile]]:
    """(the config's path for the nodes' bash, the files every node must hold), config first."""
    if source.endswith((".yml", ".yaml")):
        return _spec_files(source, suite, root, prepare)
    return _config_files(source, root, prepare)


def run_copy_path(log_dir: str, config: str) -> str:
    """Where the run copy of `config` goes, relative to the repo root (`./` and the like dropped)."""
    return posixpath.normpath(f"{log_dir}/nodes/{RUN_COPY_PREFIX}{config.rsplit('/', 1)[-1]}")


def fleet_for(
    source: str,
    mode: str,
    *,
    suite: Optional[str] = None,
    layout: Optional[str] = None,
    runner: Optional[str] = None,
    root: str,
    start_port: int,
    remote_dir: Optional[str] = None,
    node_dirs: Optional[Mapping[str, str]] = None,
    prepare: bool = False,
    gpu_ips: Optional[Sequence[str]] = None,
    node_names: Optional[Mapping[str, str]] = None,
) -> Fleet:
    """Plan the suite for each of its nodes; UsageError when it has no multi-node topology.

    `gpu_ips`: the nodes an engine found at run time (Slurm); the nodes then run a copy of the
    config whose gpu_list names them (`run_copy_path`), planned as such. `{node}` in
    `remote_dir` is each node's name (`node_names`: ip -> Slurm's name; else its ip), so nodes
    sharing a file system can each have a working copy of their own."""
    from tipcgen.check.source import plan_source

    def plan(ip: Optional[str], ips: Optional[Sequence[str]] = None) -> Plan:
        return plan_source(
            source, mode, suite=suite, layout=layout, runner=runner, root=root, node_ip=ip,
            start_port=str(start_port), gpu_ips=ips,
        )  # fmt: skip

    original = plan(None)
    ips = suite_nodes(original, source)
    if gpu_ips is not None:
        ips = topology_ips(plan(None, gpu_ips))
    check_names(source, ips)
    dirs = dict(node_dirs or {})
    unknown = sorted(set(dirs) - set(ips))
    if unknown:
        raise UsageError(f"--node-dir {unknown[0]}: not a node of this suite (its nodes: {', '.join(ips)})")
    config, files = suite_files(source, suite, root, prepare)
    if gpu_ips is not None:
        from tipcgen.plan.runcopy import with_ips

        copy = run_copy_path(original.log_dir, config)
        data = with_ips(files[0].data.decode("utf-8", "surrogateescape"), gpu_ips, source)
        files[0] = SharedFile(copy, data.encode("utf-8", "surrogateescape"), "run copy of the config", written=True)
        config = copy
    default = remote_dir or os.path.abspath(root)
    names = dict(node_names or {})
    nodes = tuple(Node(ip, dirs.get(ip, default.replace("{node}", names.get(ip, ip))), plan(ip, gpu_ips)) for ip in ips)
    from tipcgen.check.source import what_ran

    return Fleet(source, mode, config, nodes, tuple(files), start_port, what_ran(source, suite, root))
