"""The run copy of a config for an engine that learns the nodes at run time (Slurm): the same
bytes with each multi-node gpu_list entry's IPs replaced by the allocation's addresses, in
order (fleet --via slurm). Only the IP part of those entries changes; every other byte (devices, other entries,
line endings) stays, so the Plan of the copy is the Plan of the config on those nodes.
The user's config is never touched: the copy lives under the run's log directory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tipcgen.errors import UsageError
from tipcgen.plan.builder import gpu_entry

_GPU_LIST = re.compile(r"^(gpu_list[ \t]*:)([^\r\n]*)", re.M)


def nodes_needed(text: str) -> int:
    """The most nodes any multi-node gpu_list entry names (0: none)."""
    most = 0
    for match in _GPU_LIST.finditer(text):
        for entry in match.group(2).split("|"):
            kind, _ips, _gpus, nodes = gpu_entry(entry)
            if kind in ("multinode", "cpu_nodes"):
                most = max(most, nodes)
    return most


def with_ips(text: str, ips: Sequence[str], source: str) -> str:
    """`text` whose multi-node gpu_list entries name `ips` (the first k of them for an entry of k
    nodes); UsageError when an entry needs more nodes than `ips` has."""

    def entry(raw: str) -> str:
        kind, _ips, _gpus, nodes = gpu_entry(raw)
        if kind not in ("multinode", "cpu_nodes"):
            return raw
        if nodes > len(ips):
            raise UsageError(
                f"{source}: gpu_list entry {raw.strip()!r} needs {nodes} nodes; the allocation has {len(ips)}"
            )
        head, sep, devices = raw.partition(";")
        lead = head[: len(head) - len(head.lstrip())]
        return f"{lead}{','.join(ips[:nodes])}{sep}{devices}"

    def line(match: re.Match) -> str:
        return match.group(1) + "|".join(entry(e) for e in match.group(2).split("|"))

    return _GPU_LIST.sub(line, text)
