"""Plan a spec's suite or a legacy config file (the input side of `plan` and `run`)."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from typing import Optional

from tipcgen.dialects import LAYOUTS, chain_of, detect, detect_text, get_layout, refuse_chain
from tipcgen.dialects.chains import CHAIN_LAYOUTS, chain_of_text
from tipcgen.errors import SpecError, UsageError
from tipcgen.inputs import MAX_FILE_BYTES, read_bytes, read_text
from tipcgen.lower.text import config_text
from tipcgen.plan.planner import Plan, plan_config
from tipcgen.script.lines import split_lines


def what_ran(source: str, suite: Optional[str], root: str = ".") -> dict:
    """What a record names as the suite that ran: {"suite": the suite's name (a spec's `--suite`,
    else its first; None for a legacy config, whose file is the suite), "config": the spec or
    config file, relative to `root` when inside it}. The status page keys its rows by both, so a
    `--suite multiproc` run never replaces the normal suite's row."""
    name = None
    if source.endswith((".yml", ".yaml")):
        from tipcgen.check.spec import load_spec, pick_suite

        name = pick_suite(load_spec(source), suite, source)
    path, base = os.path.abspath(source), os.path.abspath(root)
    config = os.path.relpath(path, base) if path.startswith(base.rstrip(os.sep) + os.sep) else source
    return {"suite": name, "config": config}


# Configs read to tell a folder's family: a plan reads a few files beside its config, never a repo.
_FAMILY_READS = 64


def folder_family(source: str) -> Optional[str]:
    """The train layout most train configs beside `source` have, else those in its parent's other
    folders (PaddleVideo's BMN/ holds its dy2static config only): the family import types a chain
    config by when two families' tables fit its lines (importer._family_of), so `plan CONFIG`
    follows the script `import` names. Only regular files inside each folder are read (no link, no
    FIFO); one that cannot be read tells nothing. None when no train config tells."""
    here = os.path.dirname(os.path.abspath(source))
    parent = os.path.dirname(here)
    folders = [[here], sorted(e.path for e in _entries(parent) if e.is_dir(follow_symlinks=False) and e.path != here)]
    budget = _FAMILY_READS
    for group in folders:
        found: Counter = Counter()
        for folder in group:
            for entry in sorted(_entries(folder), key=lambda e: e.name):
                if budget <= 0:
                    break
                if not entry.name.endswith(".txt") or not entry.is_file(follow_symlinks=False):
                    continue
                budget -= 1
                try:
                    raw = read_bytes(entry.path, MAX_FILE_BYTES, tree=folder, links=False)
                except SpecError:
                    continue
                name, _ = detect(split_lines(raw.decode("utf-8", "replace")))
                if name is not None:
                    found[name] += 1
        if found:
            return found.most_common(1)[0][0]
    return None


def _entries(folder: str) -> list[os.DirEntry]:
    try:
        with os.scandir(folder) as it:
            return list(it)
    except OSError:
        return []


def plan_source(
    source: str,
    mode: str,
    suite: Optional[str] = None,
    layout: Optional[str] = None,
    gpuid: Optional[str] = None,
    cuda_visible_devices: Optional[str] = None,
    node_ip: Optional[str] = None,
    start_port: Optional[str] = None,
    runner: Optional[str] = None,
    root: Optional[str] = None,
    gpu_ips: Optional[Sequence[str]] = None,
    config: Optional[str] = None,
    device: Optional[str] = None,
    arch: Optional[str] = None,
) -> Plan:
    """The Plan of a spec's suite or a legacy config; `gpu_ips`: plan the run copy whose
    multi-node gpu_list names these nodes instead (fleet --via slurm); `config`: the config file's
    path as the script is given it (default: a legacy config's `source`, a suite's built file);
    `device` (npu, xpu): the run of the family's device wrapper on it, its config rewritten as the
    wrapper does (dialects/devices.py; `arch`: what `uname -i` says there, default this machine's, asked
    only when a rewrite tests it)."""
    limits = None  # a legacy config has no limits: tipcgen's defaults apply
    if source.endswith((".yml", ".yaml")):
        from tipcgen.check.spec import load_spec, pick_suite

        spec = load_spec(source)
        name = pick_suite(spec, suite, source)
        chain = CHAIN_LAYOUTS.get(spec.suite_layout(name))
        if chain is not None:  # a suite that names a chain (`layout: paddleclas_ptq`): its script's runner
            lay = chain
        else:
            lay = get_layout(spec.layout)
            runner = runner or spec.runner
        text = config_text(spec.suites[name], lay)
        limits = spec.suites[name].limits
        config = config if config is not None else spec.config_path(spec.suites[name].file)
    else:
        text = read_text(source)
        family = layout
        if family is None and chain_of_text(text, os.path.basename(source)) is not None:
            family = folder_family(source)  # two families' tables may fit: the folder's, as import types it
        chain = chain_of_text(text, os.path.basename(source), family=family)
        if chain is not None and layout and chain_of(text) is None:
            # a train-type config named for a chain (PaddleClas's PTQ): --layout plans it as a train config
            chain = None
        if chain is not None:  # another chain's config: its own layout and runner (dialects/chains/)
            if layout and chain is not chain_of_text(text, os.path.basename(source)):
                layout = None  # --layout F picks family F's own script where two families' read these lines
            if layout:
                raise UsageError(f"--layout {layout}: {source} is a {chain.description}; --layout names train layouts")
            lay = chain
        else:
            # The same detector import and lint use, so `plan CONFIG` runs what `import` would describe.
            refuse_chain(text, source)
            lay = get_layout(layout) if layout else detect_text(text, source)
    label = source if not source.endswith((".yml", ".yaml")) else f"{source} [suite {name}]"
    if gpu_ips is not None:
        from tipcgen.plan.runcopy import with_ips

        text = with_ips(text, gpu_ips, label)
    record = None
    if device is not None and device != "gpu":
        from tipcgen.dialects.devices import device_for, device_text

        if lay.name not in LAYOUTS:
            raise UsageError(f"--device {device}: {label} is a {lay.name} config; devices run train configs")
        record = device_for(lay.name, device)
        if arch is None and any(row.off_x86_64 for row in record.rewrites):
            from tipcgen.sandbox import machine_arch

            arch = machine_arch()
        text = device_text(text, record, config if config is not None else source, arch or "")
    return plan_config(
        text,
        lay,
        mode,
        gpuid=gpuid,
        cuda_visible_devices=cuda_visible_devices,
        node_ip=node_ip,
        start_port=start_port,
        source=label,
        runner=runner,
        root=root,
        limits=limits,
        config=config,
        device=record,
    )
