"""Several suites -> one spec: suite and model names, and the values every suite shares as `defaults`."""

from __future__ import annotations

import os
import re

from tipcgen.spec.policy import is_name

_SUITE_NAME = [
    (re.compile(r"^train_infer_python$"), "normal"),
    (re.compile(r"^train_linux_gpu_normal_normal_infer_python_linux_gpu_cpu$"), "normal"),
    (re.compile(r"^train_linux_gpu_fleet_normal_infer_python_linux_gpu_cpu$"), "fleet"),
    (re.compile(r"^train_linux_gpu_normal_amp_infer_python_linux_gpu_cpu$"), "amp"),
    (re.compile(r"^train_linux_gpu_fleet_amp_infer_python_linux_gpu_cpu$"), "fleet_amp"),
    (re.compile(r"^train_linux_gpu_(\w+?)_infer_python_linux_gpu_cpu$"), None),
    (re.compile(r"^train_(\w+?)_infer_python$"), None),
]


def suite_name(file: str, model_names: list[str]) -> str:
    stem = os.path.splitext(os.path.basename(file))[0]
    while stem.endswith(".txt"):
        stem = stem[:-4]
    for name in sorted(model_names, key=len, reverse=True):
        if stem.startswith(name + "_"):
            stem = stem[len(name) + 1 :]
            break
    for pattern, fixed in _SUITE_NAME:
        m = pattern.match(stem)
        if m:
            return fixed or m.group(1)
    return re.sub(r"[^A-Za-z0-9_]", "_", stem) or "suite"


def name_suites(suites: dict, model_names: list[str]) -> dict:
    """{config file name: suite} -> {suite name: suite}, numbering names that repeat."""
    named: dict = {}
    for file, data in suites.items():
        base = suite_name(file, model_names)
        name, n = base, 2
        while name in named:
            name, n = f"{base}_{n}", n + 1
        named[name] = data
    return named


def model_dir_name(paths: list[str], model_names: list[str]) -> str:
    """The spec's model: the configs' directory when they share one named like a model, else a model_name."""
    parent = os.path.basename(os.path.dirname(os.path.abspath(paths[0])))
    if is_name(parent or "") and len({os.path.dirname(os.path.abspath(p)) for p in paths}) == 1:
        return parent
    for name in model_names:
        if is_name(name):
            return name
    return "model"


# Mappings whose order is part of the emitted text: shared whole or not at all, because a merge
# puts the defaults' keys first.
_ORDERED = {"by_mode", "sections"}


def factor_defaults(named: dict) -> tuple[dict, dict]:
    """(defaults, suites without them) when several suites share values; else ({}, the suites)."""
    if len(named) <= 1:
        return {}, named
    common = _common(list(named.values()))
    common.pop("file", None)
    common.pop("layout", None)
    if not common:
        return {}, named
    return common, {n: _minus(d, common) for n, d in named.items()}


def _common(dicts: list) -> dict:
    """The part every dict agrees on (mappings recurse; other values must be equal)."""
    out = {}
    for key in dicts[0]:
        if not all(key in d for d in dicts):
            continue
        values = [d[key] for d in dicts]
        if key in _ORDERED:
            if all(list(v.items()) == list(values[0].items()) for v in values):
                out[key] = values[0]
        elif all(isinstance(v, dict) for v in values):
            sub = _common(values)
            if sub:
                out[key] = sub
        elif all(v == values[0] for v in values):
            out[key] = values[0]
    return out


def _minus(d: dict, common: dict) -> dict:
    out = {}
    for key, value in d.items():
        if key not in common:
            out[key] = value
        elif key in _ORDERED:
            if list(value.items()) != list(common[key].items()):
                out[key] = value
        elif isinstance(value, dict) and isinstance(common[key], dict):
            rest = _minus(value, common[key])
            if rest or not common[key]:
                out[key] = rest
        elif value != common[key]:
            out[key] = value
    return out


def merge(base: dict, over: dict) -> dict:
    """A suite's overlay over `defaults` (what factor_defaults took out, put back)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
