"""The benchmark matrix: a spec's `bench` section as runs, each with its per-node train command.

A run trains with the suite's own train command, the way upstream's benchmark_train mode does:
the suite is re-targeted (its `gpu_list` becomes the run mode: one process, `cpuxN`/GPU ids on
one node, or `ips;...` on several nodes), its epochs (or iterations), batch size and precision
are set for the run, and the planner (plan/) turns it into the node's train step, launcher
flags included. Then, outside the legacy config: the launcher writes its worker logs to the
run's own directory (`--log_dir`), the bench's `overrides` are appended, and `--python`
replaces the config's interpreter.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Optional

from tipcgen.errors import UsageError
from tipcgen.spec.bench_section import Bench, RunMode
from tipcgen.spec.ir import ListFlag, ModeFlag, Spec, Suite, Target
from tipcgen.spec.policy import text

MODE = "lite_train_lite_infer"  # the mode whose epoch and batch tables a run overrides
LAUNCHER = "paddle.distributed.launch"


@dataclass(frozen=True)
class NodeCommand:
    ip: Optional[str]  # None: one node
    argv: tuple[str, ...]
    cuda_visible_devices: Optional[str]
    cwd: Optional[str]  # relative to the repo root (None: the root)
    launch_log_dir: Optional[str]  # where the launcher writes workerlog.N (None: not launched)


@dataclass(frozen=True)
class BenchRun:
    run_id: str  # upstream's log name: <model>_bs<bs>_<fp>_<run_mode>_<device_num>
    model: str  # the suite's model_name
    run_mode: RunMode
    batch_size: int  # per process
    global_batch_size: int
    fp_item: str
    device: str
    max_epochs: Optional[int]
    max_iters: Optional[int]
    warmup_steps: int
    timeout: float
    log_dir: str  # the run's own logs (absolute)
    nodes: tuple[NodeCommand, ...]

    @property
    def main_log(self) -> str:
        """The log of rank 0: its launcher's workerlog.0, else node 0's output."""
        first = self.nodes[0]
        if first.launch_log_dir:
            return os.path.join(first.launch_log_dir, "workerlog.0")
        return self.node_output(0)

    def node_output(self, i: int) -> str:
        return os.path.join(self.log_dir, "train.log" if len(self.nodes) == 1 else f"node{i}.log")


def _bindable(ip: str, port: int) -> bool:
    try:
        with socket.socket() as s:
            s.bind((ip, port))
    except OSError:
        return False
    return True


def free_port(ips: tuple[str, ...], span: int = 8) -> int:
    """A port p such that p..p+span-1 can be bound on every address in `ips` (launcher ports)."""
    for _ in range(100):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        ports = range(port, min(port + span, 65536))
        if len(ports) == span and all(_bindable(ip, p) for ip in ips for p in ports):
            return port
    raise UsageError(f"no {span} free ports in a row on {', '.join(ips)} for the launcher")


def _target(mode: RunMode, device: str) -> Target:
    if device == "cpu":
        return Target(cpus=mode.procs, ips=list(mode.ips)) if mode.workers > 1 else Target()
    return Target(gpus=list(range(mode.procs)), ips=list(mode.ips))


def _need_key(flag, what: str, suite_name: str, spec: Spec) -> str:
    if flag is None or flag.key is None:
        raise UsageError(
            f"{spec.source}: suite {suite_name!r} has no `train.{what}` key, so `bench` cannot set a run's {what}"
        )
    return str(flag.key)


def run_suite(suite: Suite, name: str, spec: Spec, bench: Bench, mode: RunMode, bs: int, fp: str) -> Suite:
    """`suite` re-targeted for one run (see the module docstring)."""
    t = suite.train
    update: dict = {
        "batch_size": ModeFlag(key=_need_key(t.batch_size, "batch_size", name, spec), by_mode={MODE: bs}),
        "run": t.run[:1],
    }
    if bench.max_epochs is not None:
        update["epochs"] = ModeFlag(key=_need_key(t.epochs, "epochs", name, spec), by_mode={MODE: bench.max_epochs})
    if t.autocast is not None and t.autocast.key is not None:
        # upstream's benchmark_train.sh writes `amp` on the precision line for fp16
        update["autocast"] = ListFlag(key=t.autocast.key, values=["amp" if fp == "fp16" else "fp32"])
    if t.device is not None and t.device.key is not None and t.device.values:
        update["device"] = ListFlag(key=t.device.key, values=t.device.values[:1])
    return suite.model_copy(update={"train": t.model_copy(update=update), "topology": [_target(mode, bench.device)]})


def force(argv: list[str], settings: dict[str, str]) -> list[str]:
    """`argv` with each `key=...` of `settings` set to its value (appended when absent): some
    runners pass a mode table's text through (PaddleClas `batch_size=lite_train_lite_infer=16`,
    as upstream's script does), a benchmark run wants the number."""
    out = list(argv)
    for key, value in settings.items():
        *flag, name = key.split()  # a config key may carry its flag: `-o Global.epochs`
        at = [i for i, a in enumerate(out) if a.startswith(f"{name}=")]
        for i in at:
            out[i] = f"{name}={value}"
        if not at:
            out += [*flag, f"{name}={value}"]
    return out


def _node_command(
    step, python: Optional[str], suite_python: str, extra: list[str], launch_dir: Optional[str], settings: dict
):
    argv = force(list(step.argv or ()), settings)
    if not step.argv:
        raise UsageError(f"the train command cannot be split: {step.command}")
    if python and argv[0] == suite_python:
        argv[0] = python
    if LAUNCHER in argv and launch_dir:
        at = argv.index(LAUNCHER) + 1
        argv[at:at] = [f"--log_dir={launch_dir}"]
    return argv + extra, (launch_dir if LAUNCHER in argv else None)


def plan_run(
    spec: Spec,
    suite_name: str,
    bench: Bench,
    mode: RunMode,
    bs: int,
    fp: str,
    out: str,
    python: Optional[str],
    suffix: str = "",
) -> BenchRun:
    """One run of the matrix: its id, its numbers and every node's train command."""
    from tipcgen.dialects import get_layout
    from tipcgen.lower.text import config_text
    from tipcgen.plan.planner import plan_config

    suite = spec.suites[suite_name]
    per_card = bs // mode.workers if bench.batch_scope == "global" else bs
    global_bs = bs if bench.batch_scope == "global" else bs * mode.workers
    layout = get_layout(spec.suite_layout(suite_name))
    cfg = config_text(run_suite(suite, suite_name, spec, bench, mode, per_card, fp), layout)
    run_id = f"{suite.model_name}_bs{per_card}_{fp}_{mode.run_mode}_{mode.device_num}{suffix}"
    log_dir = os.path.join(os.path.abspath(out), "logs", run_id)
    extra = [f"{k}={text(v)}" for k, v in bench.overrides.items()]
    if bench.max_iters is not None and bench.iters_key is not None:
        extra.append(f"{bench.iters_key}={bench.max_iters}")
    settings = {str(suite.train.batch_size.key): str(per_card)} if suite.train.batch_size else {}
    if bench.max_epochs is not None and suite.train.epochs is not None:
        settings[str(suite.train.epochs.key)] = str(bench.max_epochs)
    port = str(free_port(tuple(mode.ips))) if mode.ips else None
    nodes = []
    for i, ip in enumerate(mode.ips or [None]):
        plan = plan_config(cfg, layout, MODE, node_ip=ip, start_port=port, runner=spec.runner, source=spec.source)
        train = next(s for s in plan.steps if s.kind == "train")
        launch_dir = os.path.join(log_dir, f"launch_node{i}" if mode.ips else "launch")
        argv, launched = _node_command(train, python, suite.python, extra, launch_dir, settings)
        nodes.append(NodeCommand(ip, tuple(argv), train.cuda_visible_devices, train.cwd, launched))
    return BenchRun(
        run_id=run_id,
        model=suite.model_name,
        run_mode=mode,
        batch_size=per_card,
        global_batch_size=global_bs,
        fp_item=fp,
        device=bench.device,
        max_epochs=bench.max_epochs,
        max_iters=bench.max_iters,
        warmup_steps=bench.warmup_steps,
        timeout=bench.timeout,
        log_dir=log_dir,
        nodes=tuple(nodes),
    )


def bench_of(spec: Spec, suite: Optional[str]) -> tuple[Bench, str]:
    """The spec's bench section and the suite it runs (`--suite` wins over `bench.suite`)."""
    if spec.bench is None:
        raise UsageError(
            f"{spec.source}: no `bench` section; add one to say what `tipcgen bench` runs (docs/benchmarks.md)"
        )
    from tipcgen.check.spec import pick_suite

    return spec.bench, pick_suite(spec, suite or spec.bench.suite)


def bench_matrix(spec: Spec, suite: Optional[str], out: str, python: Optional[str] = None) -> list[BenchRun]:
    """Every run of the spec's bench matrix: batch sizes x precisions x run modes, in that order."""
    bench, name = bench_of(spec, suite)
    return [
        plan_run(spec, name, bench, mode, bs, fp, out, python)
        for bs in bench.batch_sizes
        for fp in bench.precisions
        for mode in bench.run_modes
    ]


def convergence_run(spec: Spec, suite: Optional[str], out: str, python: Optional[str] = None) -> BenchRun:
    """The run `--converge` checks: bench's first run mode and precision, the convergence
    section's batch size (default: bench's first) and length, its overrides over bench's."""
    bench, name = bench_of(spec, suite)
    conv = spec.convergence
    if conv is None:
        raise UsageError(
            f"{spec.source}: no `convergence` section; add one to say what `--converge` checks (docs/benchmarks.md)"
        )
    length = {"max_epochs": conv.within.epochs, "max_iters": conv.within.iters}
    if conv.within.iters is not None and bench.iters_key is None:
        raise UsageError(f"{spec.source}: `convergence.within.iters` needs `bench.iters_key` (the iterations option)")
    bs = conv.batch_size or bench.batch_sizes[0]
    mode = bench.run_modes[0]
    if bench.batch_scope == "global" and bs % mode.workers:
        raise UsageError(f"{spec.source}: convergence batch size {bs} does not split over {mode.workers} processes")
    run_bench = bench.model_copy(update={**length, "overrides": {**bench.overrides, **conv.overrides}})
    return plan_run(spec, name, run_bench, mode, bs, bench.precisions[0], out, python, suffix="_converge")
