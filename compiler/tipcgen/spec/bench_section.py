"""The `bench` and `convergence` sections of a spec: what `tipcgen bench` runs and checks.

`bench` is seed 004's matrix (run_benchmark.sh sp|mp BATCH fp32|fp16 MAX_ITER): run modes
(one process, N processes on one node, N nodes) x batch sizes x precisions, each run training
for `max_epochs` (or `max_iters`) with the first `warmup_steps` throughput records skipped.
`convergence` is seed 004's convergence check ("loss from 10+ down to about 0.05"): a metric
must reach a target within N epochs or iterations.
"""

from __future__ import annotations

import ipaddress
import math
import re
from typing import Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, StrictInt, field_validator, model_validator

from tipcgen.spec.policy import ConfigKey, Scalar, SuiteName, refuse_control

MAX_WORKERS = 1024  # processes of one run, all nodes together
MAX_RUN_COUNT = 10_000_000  # epochs, iterations, batch sizes, warm-up steps
_METRIC = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]{0,63}$")


Precision = Literal["fp32", "fp16"]


def _fp32() -> list[Precision]:
    return ["fp32"]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunMode(Model):
    """One run mode: `sp` (one process) or `mp` (`procs` processes per node, on every node of
    `ips`; no `ips`: one node). Upstream's benchmark names it `N<nodes>C<workers>`."""

    run_mode: Literal["sp", "mp"]
    procs: int = Field(default=1, ge=1, le=MAX_WORKERS)
    ips: list[str] = Field(default_factory=list)

    @field_validator("ips")
    @classmethod
    def _ips(cls, v):
        for ip in v:
            refuse_control(ip)
            try:
                ipaddress.IPv4Address(ip)
            except ValueError:
                raise ValueError(f"{ip!r} is not an IPv4 address") from None
        if len(set(v)) != len(v):
            raise ValueError("an IP is listed twice")
        if len(v) == 1:
            raise ValueError("a multi-node run needs at least two ips; drop `ips` for one node")
        return v

    @model_validator(mode="after")
    def _shape(self):
        if self.run_mode == "sp" and (self.procs != 1 or self.ips):
            raise ValueError("`sp` is one process on one node: give `run_mode: mp` for `procs` or `ips`")
        if self.run_mode == "mp" and self.workers == 1:
            raise ValueError("`mp` needs more than one process: set `procs` above 1 or list two or more `ips`")
        if self.workers > MAX_WORKERS:
            raise ValueError(f"{self.workers} processes in one run; at most {MAX_WORKERS}")
        return self

    @property
    def nodes(self) -> int:
        return max(1, len(self.ips))

    @property
    def workers(self) -> int:
        return self.nodes * self.procs

    @property
    def device_num(self) -> str:
        """Upstream's `N1C1` notation: nodes, then cards (processes) of all nodes."""
        return f"N{self.nodes}C{self.workers}"


class Bench(Model):
    """The benchmark matrix of `tipcgen bench`: every run mode x batch size x precision."""

    suite: Optional[SuiteName] = None  # whose train command runs (default: the first suite)
    device: Literal["cpu", "gpu"] = "gpu"
    run_modes: list[RunMode] = Field(min_length=1, max_length=64)
    # strict: `"10"`, `10.0` or `true` is not a batch size (the run's name and argv carry the number)
    batch_sizes: list[StrictInt] = Field(min_length=1, max_length=64)
    # `card`: each process gets the batch size (upstream's benchmark); `global`: the processes of
    # a run share it, so runs with different worker counts compare at the same global batch.
    batch_scope: Literal["card", "global"] = "card"
    precisions: list[Precision] = Field(default_factory=_fp32, min_length=1)
    max_epochs: Optional[int] = Field(default=None, ge=1, le=MAX_RUN_COUNT)
    max_iters: Optional[int] = Field(default=None, ge=1, le=MAX_RUN_COUNT)
    iters_key: Optional[ConfigKey] = None  # the trainer's option for max_iters (e.g. --max_iters)
    warmup_steps: int = Field(default=0, ge=0, le=MAX_RUN_COUNT)  # `ips:` records skipped
    # Extra `key=value` options appended to every run's train command (e.g. print every step).
    overrides: dict[ConfigKey, Scalar] = Field(default_factory=dict)
    timeout: float = Field(default=3600.0, gt=0, le=7 * 24 * 3600)  # seconds one run may take

    @field_validator("batch_sizes")
    @classmethod
    def _batches(cls, v):
        for bs in v:
            if not 1 <= bs <= MAX_RUN_COUNT:
                raise ValueError(f"a batch size is a whole number from 1 to {MAX_RUN_COUNT}, got {bs}")
        if len(set(v)) != len(v):
            raise ValueError("a batch size is listed twice")
        return v

    @model_validator(mode="after")
    def _length_and_split(self):
        if (self.max_epochs is None) == (self.max_iters is None):
            raise ValueError("give `max_epochs` or `max_iters` (how long each run trains), exactly one")
        if self.max_iters is not None and self.iters_key is None:
            raise ValueError("`max_iters` needs `iters_key`, the train option that limits iterations")
        if self.batch_scope == "global":
            for mode in self.run_modes:
                for bs in self.batch_sizes:
                    if bs % mode.workers:
                        raise ValueError(
                            f"global batch size {bs} does not split over the {mode.workers} processes of "
                            f"{mode.device_num}: use a multiple of {mode.workers}"
                        )
        names = [m.device_num for m in self.run_modes]
        dup = next((n for n in names if names.count(n) > 1), None)
        if dup:
            raise ValueError(f"two run modes are {dup} (nodes x processes): each run needs its own name")
        return self


class Within(Model):
    """How long a convergence run trains: `epochs` or `iters`, exactly one."""

    epochs: Optional[int] = Field(default=None, ge=1, le=MAX_RUN_COUNT)
    iters: Optional[int] = Field(default=None, ge=1, le=MAX_RUN_COUNT)

    @model_validator(mode="after")
    def _one(self):
        if (self.epochs is None) == (self.iters is None):
            raise ValueError("give `epochs` or `iters`, exactly one")
        return self


class Convergence(Model):
    """Seed 004's convergence check: `metric` reaches `target` (give or take `tolerance`)
    within the first N epochs or iterations of a `tipcgen bench --converge` run."""

    metric: str = "loss"  # the log's `<metric>: <value>` (loss, acc, ...)
    target: float
    direction: Literal["min", "max"] = "min"  # min: lower is better (a loss); max: an accuracy
    tolerance: float = Field(default=0.0, ge=0)
    within: Within
    batch_size: Optional[StrictInt] = Field(default=None, ge=1, le=MAX_RUN_COUNT)  # default: bench's first
    # Extra `key=value` options of the convergence run (over bench's overrides).
    overrides: dict[ConfigKey, Scalar] = Field(default_factory=dict)

    @field_validator("metric")
    @classmethod
    def _metric(cls, v):
        refuse_control(v)
        if not _METRIC.match(v):
            raise ValueError(f"metric {v!r} must be a name as logs print it (`loss`, `acc`, `top1`...)")
        return v

    @field_validator("target", "tolerance")
    @classmethod
    def _finite(cls, v):
        if not math.isfinite(v):
            raise ValueError("must be a finite number")
        return v
