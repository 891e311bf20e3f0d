"""The run copy of a config for an engine that learns the nodes at run time (fleet --via
slurm): the same bytes with each multi-node gpu_list entry's IPs replaced by the allocation's
addresses, in order, as many as the run has nodes (the config's IPs are placeholders; their
count is only the default node count). Only the IP part of those entries changes; every other
byte (devices, other entries, line endings) stays, so the Plan of the copy is the Plan of the
config on those nodes. The user's config is never touched: the copy lives under the run's log
directory.
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
    """`text` whose multi-node gpu_list entries name `ips` (two or more: UsageError otherwise)."""
    if len(ips) < 2:
        raise UsageError(f"{source}: a multi-node run needs two or more nodes, not {len(ips)}")

    def entry(raw: str) -> str:
        kind, _ips, _gpus, _nodes = gpu_entry(raw)
        if kind not in ("multinode", "cpu_nodes"):
            return raw
        head, sep, devices = raw.partition(";")
        lead = head[: len(head) - len(head.lstrip())]
        return f"{lead}{','.join(ips)}{sep}{devices}"

    def line(match: re.Match) -> str:
        return match.group(1) + "|".join(entry(e) for e in match.group(2).split("|"))

    return _GPU_LIST.sub(line, text)
