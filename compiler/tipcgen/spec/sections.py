"""The trailing benchmark sections of a legacy config, typed: what `benchmark_train.sh` reads.

A suite keeps its sections as ordered `key: value` text (`Suite.sections`), so that a config
round-trips byte for byte; `read_params` gives the typed view (batch sizes, precisions, epochs,
model types, workers, flags, profiler options, input shapes) and the problems a benchmark script
would trip on, which `tipcgen lint` reports (TIPC023, TIPC024) with the line.

Facts from the upstream scripts: `benchmark_train.sh` splits `batch_size`, `fp_items` and
`model_type` on `|`, names each run `<model_type>_bs<N>_<fp>_<run mode>_<device>` and splits that
name on `_` again, so a precision or batch size with `_` in it breaks the run's parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from tipcgen.spec.policy import text

# The sections the corpus has after a train config's core (benchmark_train.sh reads the first).
BENCHMARK_SECTIONS = (
    "train_benchmark_params",
    "infer_benchmark_params",
    "to_static_train_benchmark_params",
    "disable_train_benchmark",
)
_INT_KEYS = {"epoch": "epoch", "num_workers": "num_workers", "repeat": "repeat", "max-iters": "max_iters"}
_WORD = re.compile(r"[A-Za-z0-9.+-]+")  # no `_`: run names are split on it
_FLAG = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_SHAPE = re.compile(r"\{\s*([A-Za-z0-9]+)\s*,\s*\[\s*(\d+(?:\s*,\s*\d+)*)\s*\]\s*\}")
# The names a `flags` item may export: Paddle's FLAGS_*, all the corpus uses. Any other variable
# (BASH_ENV, LD_PRELOAD, PATH, PYTHONPATH, ...) changes what the runs execute, so the generated
# benchmark_train.sh and plan/benchmark.py refuse it too.
FLAG_NAME = re.compile(r"FLAGS_[A-Za-z0-9_]+")


def flag_name_problem(item: str) -> Optional[str]:
    """Why a `flags` item (`NAME=VALUE`) may not be exported; None when it may (or has no `=`)."""
    name, eq, _value = item.lstrip(" \t").partition("=")  # upstream's `eval export` drops blanks before it
    if not eq or FLAG_NAME.fullmatch(name):
        return None
    return (
        f"`flags` item {item!r} would export {name!r}: only Paddle's FLAGS_* variables are exported "
        "(another variable, such as BASH_ENV, LD_PRELOAD or PATH, changes what the runs execute)"
    )


@dataclass(frozen=True)
class InputShape:
    dtype: str
    shape: tuple[int, ...]


@dataclass(frozen=True)
class Issue:
    key: str
    rule: str  # TIPC023 (misread) or TIPC024 (trailing blanks)
    message: str
    hint: str


@dataclass(frozen=True)
class BenchmarkParams:
    batch_sizes: tuple[int, ...] = ()
    fp_items: tuple[str, ...] = ()
    model_types: tuple[str, ...] = ()
    epoch: Optional[int] = None
    num_workers: Optional[int] = None
    repeat: Optional[int] = None
    max_iters: Optional[int] = None
    log_iters: Optional[int] = None
    log_options: tuple[tuple[str, str], ...] = ()  # e.g. (("skip_iters", "3"), ("repeats", "500"))
    flags: tuple[tuple[str, str], ...] = ()  # FLAGS_x=value, in order
    profiler_options: Optional[str] = None
    random_inputs: tuple[InputShape, ...] = ()
    numpy_inputs: tuple[str, ...] = ()
    to_static: Optional[str] = None  # the flag that turns on dynamic-to-static training
    other: tuple[tuple[str, str], ...] = field(default=())  # keys no script is known to read


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return text(value)  # a spec's typed scalar: its legacy text


def read_params(params: Mapping[str, Any]) -> tuple[BenchmarkParams, list[Issue]]:
    """The typed view of one section's `key: value` pairs, and what a script would misread."""
    issues: list[Issue] = []
    values: dict[str, Any] = {}
    other = []
    for key, raw in params.items():
        value = _text(raw)
        if value != value.rstrip():
            issues.append(
                Issue(key, "TIPC024", f"`{key}` ends in blanks: {value!r}", "remove them (they reach the command)")
            )
        value = value.strip().strip("'")
        if value == "null":
            continue
        reader = _READERS.get(key)
        if reader is None:
            other.append((key, value))
            continue
        try:
            values.update(reader(key, value))
        except ValueError as exc:
            issues.append(Issue(key, "TIPC023", str(exc), _HINTS[key]))
    return BenchmarkParams(other=tuple(other), **values), issues


# A number as the scripts' bash arithmetic reads it: ASCII digits (no `1_0`, which int() takes
# as 10, no `²`), at most 18 of them (64-bit).
_NUMBER = re.compile(r"[0-9]{1,18}")


def _ints(key: str, value: str) -> dict:
    items = value.split("|")
    if not all(_NUMBER.fullmatch(i) for i in items):
        raise ValueError(f"`{key}` is {value!r}: not whole numbers separated by `|`")
    return {"batch_sizes": tuple(int(i) for i in items)}


def _words(name: str):
    def read(key: str, value: str) -> dict:
        items = value.split("|")
        bad = [i for i in items if not _WORD.fullmatch(i)]
        if bad:
            raise ValueError(f"`{key}` item {bad[0]!r} is not a name without `_` (the run's name is split on `_`)")
        return {name: tuple(items)}

    return read


def _model_types(key: str, value: str) -> dict:
    items = value.split("|")
    if not all(re.fullmatch(r"[A-Za-z0-9_]+", i) for i in items):
        raise ValueError(f"`{key}` is {value!r}: not trainer names separated by `|`")
    return {"model_types": tuple(items)}


def _int(key: str, value: str) -> dict:
    if not _NUMBER.fullmatch(value):
        raise ValueError(f"`{key}` is {value!r}: not a whole number")
    return {_INT_KEYS[key]: int(value)}


def _log_iters(key: str, value: str) -> dict:
    first, *rest = value.split(";")
    options = [tuple(part.split(":", 1)) for part in rest if part]
    if not first.isdigit() or any(len(o) != 2 or not o[1] for o in options):
        raise ValueError(f"`{key}` is {value!r}: not N[;name:N]...")
    return {"log_iters": int(first), "log_options": tuple((k, v) for k, v in options)}


def _flags(key: str, value: str) -> dict:
    items = [i for i in value.split(";") if i]
    refused = [p for p in map(flag_name_problem, items) if p]
    if refused:
        raise ValueError(refused[0])
    bad = [i for i in items if not _FLAG.fullmatch(i)]
    if bad:
        raise ValueError(f"`{key}` item {bad[0]!r} is not NAME=VALUE")
    return {"flags": tuple(tuple(i.split("=", 1)) for i in items)}


def _random_inputs(key: str, value: str) -> dict:
    inner = value[1:-1] if value.startswith("[") and value.endswith("]") else None
    parts = re.findall(r"\{[^}]*\}", inner or "")
    between = re.sub(r"\{[^}]*\}", "", inner or "")
    if inner is None or not parts or between.replace(",", "").strip() or not all(_SHAPE.fullmatch(p) for p in parts):
        raise ValueError(f"`{key}` is {value!r}: not [{{dtype,[d,...]}},...]")
    shapes = []
    for part in parts:
        m = _SHAPE.fullmatch(part)
        assert m is not None  # checked above
        shapes.append(InputShape(m.group(1), tuple(int(d) for d in re.split(r"\s*,\s*", m.group(2)))))
    return {"random_inputs": tuple(shapes)}


def _numpy_inputs(key: str, value: str) -> dict:
    items = value.split("|")
    if not all(i.endswith(".npy") for i in items):
        raise ValueError(f"`{key}` is {value!r}: not .npy file names")
    return {"numpy_inputs": tuple(items)}


def _plain(name: str):
    return lambda key, value: {name: value}


_READERS = {
    "batch_size": _ints,
    "fp_items": _words("fp_items"),
    "model_type": _model_types,
    "epoch": _int,
    "num_workers": _int,
    "repeat": _int,
    "max-iters": _int,
    "log_iters": _log_iters,
    "flags": _flags,
    "--profiler_options": _plain("profiler_options"),
    "random_infer_input": _random_inputs,
    "numpy_infer_input": _numpy_inputs,
    "to_static_train": _plain("to_static"),
}
_HINTS = {
    "batch_size": "write batch sizes like 8|16",
    "fp_items": "write precisions like fp32|fp16",
    "model_type": "write trainer names like norm_train|to_static_train",
    "epoch": "write a whole number",
    "num_workers": "write a whole number",
    "repeat": "write a whole number",
    "max-iters": "write a whole number",
    "log_iters": "write e.g. 5;skip_iters:3;repeats:500",
    "flags": "write FLAGS_name=value pairs separated by ;",
    "random_infer_input": "write e.g. [{float32,[3,224,224]}]",
    "numpy_infer_input": "write .npy file names",
}
