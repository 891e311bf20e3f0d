"""The Plan: the ordered steps a config implies for a mode, by the runner of its dialect. Pure
Python, no I/O.

This is the single source of behaviour: the executor runs it, the docs print
its status lines, and the generated bash is tested against it. It follows the
upstream scripts' semantics line by line (see docs/legacy-format.md), except
where we deliberately differ (documented in docs/runners.md and the generated docs):
gpu_list entries are parsed by structure, not string length.

`plan_config` checks the config as the runner would (refusals.py), then lets the dialect's
runner (runner.py, registry.py, runners/) add its steps to a `Builder` (builder.py).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace
from typing import Any, Optional

from tipcgen.dialects import Layout, get_layout
from tipcgen.dialects.devices import Device
from tipcgen.errors import UsageError
from tipcgen.lower.configview import WHOLE, ConfigView
from tipcgen.plan.builder import Builder
from tipcgen.plan.limits import multinode, spec_limit, spec_stall
from tipcgen.plan.refusals import check_bytes, check_view
from tipcgen.plan.registry import RUNNERS
from tipcgen.plan.runner import Runner
from tipcgen.plan.steps import Plan, Step


def plan_config(
    text: str,
    layout: Layout,
    mode: str,
    gpuid: Optional[str] = None,
    cuda_visible_devices: Optional[str] = None,
    node_ip: Optional[str] = None,
    start_port: Optional[str] = None,
    source: str = "config",
    runner: Optional[str] = None,
    root: Optional[str] = None,
    limits: Any = None,
    config: Optional[str] = None,
    reads: Optional[set] = None,
    device: Optional[Device] = None,
) -> Plan:
    """Plan the steps of `test_train_inference_python.sh CONFIG MODE [GPUID]`.

    The rest is the caller's environment: CUDA_VISIBLE_DEVICES (None: unset), TIPC_NODE_IP
    (this node's address in a multi-node gpu_list) and FLAGS_START_PORT. `source` names the
    config in error messages; `runner` picks one of the dialect's runners (default: its first);
    `root` is the repo root's absolute path (runners whose script builds `$(pwd)/...` paths);
    `limits` the suite's spec `limits` (step time limits; None: tipcgen's defaults); `config` the
    config file's path as the script is given it (a table's Config word; default: `source`);
    `reads`: gets the config's roles the planning read (ConfigView.roles_read);
    `device` a device variant's record (dialects/devices.py): its runner word and edits (`text`
    is the config as its rewrites left it: devices.device_text).
    """
    r = runner_for(layout, runner)
    if mode not in r.MODES:
        raise UsageError(f"unknown mode {mode!r}; modes are {', '.join(r.MODES)}")
    check_bytes(text, source)
    view = ConfigView.parse(text, layout)
    check_view(view, source)
    b = Builder(view, mode, cuda_visible_devices, node_ip or None, start_port or None, gpuid or None, root)
    b.text, b.source = text, source
    b.config = config if config is not None else source
    if device is not None:
        b.gpu_word, b.runner_edits = device.word, frozenset(e.name for e in device.runner_edits)
    r.plan(b)
    steps = tuple(_limited(step, limits, mode) for step in b.steps) if limits is not None else tuple(b.steps)
    plan = Plan(
        layout.name, mode, view.value("model_name"), b.log_dir, b.status_log, steps,
        status_format=r.STATUS_FORMAT, preamble=tuple(b.preamble),
        env=(("PADDLE_START_PORT", start_port),) if start_port else (),
    )  # fmt: skip
    if reads is not None:
        reads.update(view.roles_read())
    return plan


def _limited(step: Step, limits: Any, mode: str) -> Step:
    """`step` with the time limits the spec's `limits` give it."""
    timeout = spec_limit(limits, step.kind, mode, multinode(step.argv))
    return replace(step, timeout=timeout, stall=spec_stall(limits, step.kind, mode))


def runner_for(layout: Layout, name: Optional[str] = None) -> Runner:
    """The runner (plan/runners/<name>.py) of a layout: `name` or the dialect's default."""
    names = layout.dialect.runners
    if name is None:
        name = names[0]
    if name not in names:
        raise UsageError(f"layout {layout.name} has no runner {name!r}; its runners are {', '.join(names)}")
    return RUNNERS[name]


def mode_plans(text: str, layout: Layout, runner: Optional[str] = None, source: str = "config") -> dict[str, Plan]:
    """{mode: Plan} of `text` in every mode of the runner, in its order; raises the first mode's
    refusal. Validation, lint's effect checks and the docs each need these for every config of a
    suite: a registered layout's are kept (plans are frozen; nothing here reads the disk without a
    `root`), so one `check` plans each config once, not three times."""
    try:
        registered = get_layout(layout.name) is layout
    except UsageError:
        registered = False
    modes = runner_for(layout, runner).MODES
    if not registered:  # a layout made on the fly: its name does not say what it is
        return {mode: plan_config(text, layout, mode, runner=runner, source=source) for mode in modes}
    key = (text, layout.name, runner, source)
    hit = _KEPT.get(key)
    if hit is None:
        read: set = set()
        hit = tuple((mode, plan_config(text, layout, mode, runner=runner, source=source, reads=read)) for mode in modes)
        _keep(key, hit, frozenset(read))
    else:
        _KEPT.move_to_end(key)
    return dict(hit)


def roles_read(text: str, layout: Layout, runner: Optional[str] = None, source: str = "config") -> frozenset:
    """The config's roles its Plans in every mode read (mode_plans'; WHOLE in it: the text was
    read as such, any line may matter). A line of no role read cannot change what runs."""
    mode_plans(text, layout, runner, source)
    found = _READS.get((text, layout.name, runner, source))
    return found if found is not None else frozenset({WHOLE})


# mode_plans' Plans, most recently used last, bounded by their steps, not their number: a matrix
# may plan thousands of steps per mode, and a check reads a whole spec's suites before its docs.
_KEPT: OrderedDict = OrderedDict()
_READS: dict = {}  # the same keys: the roles those Plans read
_KEPT_STEPS = [0]
KEPT_STEPS_MAX = 100_000


def _keep(key: tuple, plans: tuple, reads: frozenset) -> None:
    size = sum(len(plan.steps) + 1 for _, plan in plans)
    if size > KEPT_STEPS_MAX:
        return
    _KEPT[key] = plans
    _READS[key] = reads
    _KEPT_STEPS[0] += size
    while _KEPT_STEPS[0] > KEPT_STEPS_MAX:
        old_key, old = _KEPT.popitem(last=False)
        _READS.pop(old_key, None)
        _KEPT_STEPS[0] -= sum(len(plan.steps) + 1 for _, plan in old)


def forget_plans() -> None:
    """Drop the kept Plans (tests that count planning start from none)."""
    _KEPT.clear()
    _READS.clear()
    _KEPT_STEPS[0] = 0
