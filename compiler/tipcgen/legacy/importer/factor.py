"""Several suites -> one spec: suite and model names, and the values every suite shares as `defaults`."""

from __future__ import annotations

import os
import re

from tipcgen.spec.load import MODEL_NAME_VAR
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
    """{config file name: suite} -> {suite name: suite}. A directory of several models (ResNet50,
    ResNet50_vd...) names each suite after its model and kind (`ResNet50_vd_amp`); names that
    still repeat are numbered."""
    several = len(set(model_names)) > 1
    named: dict = {}
    for file, data in suites.items():
        base = suite_name(file, model_names)
        model = str(data.get("model_name", ""))
        if several and is_name(f"{model}_{base}"):
            base = f"{model}_{base}"
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


# Fields that name the suite itself: never written with `${model_name}`.
_OWN = {"file", "model_name", "doc", "layout"}


def templated(suite: dict) -> dict:
    """The suite with its model_name written `${model_name}` in its text (load expands it back,
    exactly: `$` cannot occur in config text), so suites of several models share values."""
    name = suite.get("model_name")
    if not isinstance(name, str) or len(name) < 3:
        return suite
    return {k: (v if k in _OWN else _template(v, name)) for k, v in suite.items()}


def _template(value, name: str):
    if isinstance(value, str):
        return value.replace(name, MODEL_NAME_VAR)
    if isinstance(value, dict):
        return {k: _template(v, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_template(v, name) for v in value]
    return value


def factor_defaults(named: dict, lenient: bool = False) -> tuple[dict, dict]:
    """(defaults, suites without them) when several suites share values; else ({}, the suites).

    `lenient` also shares a key some suites lack (a truncated config's missing sections): the
    caller must check the result still rebuilds those configs exactly, and else import strictly."""
    if len(named) <= 1:
        return {}, named
    named = {n: templated(d) for n, d in named.items()}
    common = _common(list(named.values()), lenient)
    common.pop("file", None)
    common.pop("layout", None)
    if not common:
        return {}, named
    return common, {n: _minus(d, common) for n, d in named.items()}


def _common(dicts: list, lenient: bool = False) -> dict:
    """What the dicts share: for a key every dict has, mappings recurse, and any other value the
    most dicts hold (two or more, and at least a third) is shared; the others keep theirs as an
    override. A key some dict lacks stays out (a merge cannot take a default away), unless
    `lenient` and most dicts have it."""
    out = {}
    keys = list(dict.fromkeys(k for d in dicts for k in d))
    for key in keys:
        having = [d for d in dicts if key in d]
        if len(having) < len(dicts) and not (lenient and len(having) * 2 > len(dicts)):
            continue
        values = [d[key] for d in having]
        if key not in _ORDERED and all(isinstance(v, dict) for v in values):
            sub = _common(values, lenient)
            if sub:
                out[key] = sub
            continue
        value, count = _most_common(values, ordered=key in _ORDERED)
        if count >= 2 and count * 3 >= len(dicts):
            out[key] = value
    return out


def _same(a, b, ordered: bool) -> bool:
    if ordered and isinstance(a, dict) and isinstance(b, dict):
        return list(a.items()) == list(b.items())
    return bool(a == b) and type(a) is type(b)


def _most_common(values: list, ordered: bool) -> tuple:
    """(the value most entries equal, how many) — values may be unhashable (lists, mappings)."""
    best, best_count = values[0], 0
    for candidate in values:
        count = sum(_same(candidate, v, ordered) for v in values)
        if count > best_count:
            best, best_count = candidate, count
    return best, best_count


def _minus(d: dict, common: dict) -> dict:
    """What `d` must say over `common`: its differing values, and for a shared value it lacks
    (lenient factoring) an explicit empty value (see _absent; mappings recurse)."""
    out = {}
    for key, value in common.items():
        if key not in d:
            out[key] = _minus({}, value) if isinstance(value, dict) else _absent(value)
    for key, value in d.items():
        if key not in common:
            out[key] = value
        elif key in _ORDERED:
            if not _same(value, common[key], True):
                out[key] = value
        elif isinstance(value, dict) and isinstance(common[key], dict):
            rest = _minus(value, common[key])
            if rest or not common[key]:
                out[key] = rest
        elif not _same(value, common[key], False):
            out[key] = value
    return out


def _absent(shared):
    """How a suite says it lacks a shared value: an empty list for a list (every list field
    defaults to empty), null otherwise (every plain field defaults to null)."""
    return [] if isinstance(shared, list) else None


def merge(base: dict, over: dict) -> dict:
    """A suite's overlay over `defaults` (what factor_defaults took out, put back)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out
