"""Read a training log: throughput records (`ips:` lines), epoch summaries, metrics, memory.

Three line shapes are understood, the ones Paddle's model repos and our example print:

- PaddleOCR (and the tiny_rec example)::

    epoch: [1/3], global_step: 10, lr: 0.001, loss: 2.3, avg_reader_cost: 0.01 s,
    avg_batch_cost: 0.2 s, avg_samples: 16.0, ips: 80.0 samples/s, max_mem_reserved: 1234 MB

- PaddleClas::

    [Train][Epoch 1/2][Iter: 0/50]lr(LinearWarmup): 0.0001, loss: 7.01, batch_cost: 0.97528s,
    reader_cost: 0.84, ips: 8.20282 samples/s, eta: 0:01:36

- the tiny_rec trainer's epoch summary (global samples/s of all processes)::

    epoch: 2/4, loss: 18.1028, samples/s: 352.8, time: 0.567 s

`ips:` values are what one process measured (a card's throughput), as upstream's analysis
script reads them with `--keyword ips:`. AutoLog blocks (run/autolog.py) add `cpu_rss(MB)` /
`gpu_rss(MB)` to the memory figures.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from tipcgen.run.autolog import parse_autolog

# `name: number` anywhere in a line (`name` may carry a unit or a qualifier in parentheses).
_ITEM = re.compile(r"([A-Za-z_][A-Za-z0-9_.]*(?:\([^()]*\))?)\s*:\s*\[?\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_EPOCH_OF = re.compile(r"epoch\s*:?\s*\[?\s*(\d+)\s*/\s*(\d+)", re.IGNORECASE)
_ITER_OF = re.compile(r"iter\s*:?\s*\[?\s*(\d+)\s*/\s*(\d+)", re.IGNORECASE)
_EPOCH_SUMMARY = re.compile(
    r"epoch: (\d+)/(\d+), loss: ([-+0-9.eE]+|nan|inf), samples/s: ([0-9.]+), time: ([0-9.]+) s", re.IGNORECASE
)
_MEM = re.compile(r"max_mem_(reserved|allocated)\s*:\s*([0-9.]+)\s*(MB|GB|B)?", re.IGNORECASE)
_PADDLE_VERSION = re.compile(r"\bpaddle(?:paddle)?[ :=v]+(\d+\.\d+(?:\.\d+)?(?:[-.\w]*)?)", re.IGNORECASE)


@dataclass(frozen=True)
class IpsRecord:
    """One `ips:` line: a process's throughput over its last logging window."""

    ips: float
    step: Optional[int] = None  # global step (1-based) when the line says it
    epoch: Optional[int] = None
    loss: Optional[float] = None
    batch_cost: Optional[float] = None  # seconds per step
    samples: Optional[float] = None  # samples per step (this process)


@dataclass(frozen=True)
class EpochSummary:
    epoch: int
    epochs: int
    loss: float
    samples_per_s: float  # every process together
    seconds: float


@dataclass
class TrainLog:
    ips: list[IpsRecord] = field(default_factory=list)
    epochs: list[EpochSummary] = field(default_factory=list)
    # metric name -> [(epoch or None, step or None, value)] in log order (ips lines excluded
    # for `loss`: it has its own curve there)
    metrics: dict[str, list[tuple[Optional[int], Optional[int], float]]] = field(default_factory=dict)
    max_mem_reserved_mb: Optional[float] = None
    max_mem_allocated_mb: Optional[float] = None
    autolog_rss_mb: Optional[float] = None
    frame_version: Optional[str] = None


def items(line: str) -> dict[str, float]:
    """Every `name: number` of a line (the last one wins when a name repeats)."""
    out = {}
    for name, value in _ITEM.findall(line):
        try:
            out[name.lower()] = float(value)
        except ValueError:  # pragma: no cover (the pattern only matches numbers)
            continue
    return out


def _first(found: dict[str, float], *names: str) -> Optional[float]:
    for name in names:
        if name in found:
            return found[name]
    return None


def _ips_record(line: str, found: dict[str, float]) -> IpsRecord:
    epoch = _EPOCH_OF.search(line)
    step = _first(found, "global_step", "step")
    if step is None:
        it = _ITER_OF.search(line)
        step = float(it.group(1)) if it else None
    return IpsRecord(
        ips=found["ips"],
        step=int(step) if step is not None else None,
        epoch=int(epoch.group(1)) if epoch else None,
        loss=_first(found, "loss"),
        batch_cost=_first(found, "avg_batch_cost", "batch_cost"),
        samples=_first(found, "avg_samples"),
    )


def _memory(log: TrainLog, line: str) -> None:
    for kind, value, unit in _MEM.findall(line):
        mb = float(value) * {"gb": 1024.0, "b": 1 / (1024 * 1024)}.get(unit.lower(), 1.0)
        attr = f"max_mem_{kind.lower()}_mb"
        setattr(log, attr, max(mb, getattr(log, attr) or 0.0))


def parse_train_log(text: str) -> TrainLog:
    """What a training log says about speed, the loss curve and memory."""
    log = TrainLog()
    for line in text.splitlines():
        summary = _EPOCH_SUMMARY.search(line)
        if summary:
            e, n, loss, sps, secs = summary.groups()
            log.epochs.append(EpochSummary(int(e), int(n), float(loss), float(sps), float(secs)))
            log.metrics.setdefault("loss", []).append((int(e), None, float(loss)))
            continue
        if "max_mem_" in line:
            _memory(log, line)
        found = items(line)
        if "ips" in found:
            log.ips.append(_ips_record(line, found))
            continue
        epoch = _EPOCH_OF.search(line)
        for name, value in found.items():
            if name not in ("epoch", "global_step", "step", "lr", "iter", "eta"):
                log.metrics.setdefault(name, []).append((int(epoch.group(1)) if epoch else None, None, value))
        if log.frame_version is None:
            version = _PADDLE_VERSION.search(line)
            log.frame_version = version.group(1) if version else None
    block = parse_autolog(text)
    if block:
        rss = [v for k, v in block["perf"].items() if k.lower().endswith("rss(mb)") and isinstance(v, float)]
        log.autolog_rss_mb = max(rss) if rss else None
    return log


def progress(text: str) -> Optional[tuple[int, int]]:
    """(done, total) epochs of the latest line naming `epoch i/n` (a summary line counts its
    epoch as done, a step line the epochs before it), or None."""
    last = None
    for line in text.splitlines():
        summary = _EPOCH_SUMMARY.search(line)
        if summary:
            last = (int(summary.group(1)), int(summary.group(2)))
            continue
        m = _EPOCH_OF.search(line)
        if m:
            last = (int(m.group(1)) - 1, int(m.group(2)))
    return last
