"""`tipcgen bench CONFIG`: a legacy config benchmarked the way upstream's benchmark_train.sh
reads it. The config is imported into a one-suite spec (importer/, verified elsewhere to
rebuild byte for byte), and its `train_benchmark_params` section (`batch_size:8|16`,
`fp_items:fp32|fp16`, `epoch:2`) becomes the `bench` section: one process (N1C1, upstream's
single-card run), per-card batch sizes, two warm-up steps skipped (upstream's `--skip_steps 2`).
A `gpu_list` of `-1` means CPU runs.
"""

from __future__ import annotations

import re
from typing import Optional

from tipcgen.errors import Problem, SpecError
from tipcgen.spec.bench_section import MAX_RUN_COUNT
from tipcgen.spec.ir import Spec

SECTION = "train_benchmark_params"
_HEADER = re.compile(r"^=+\s*([A-Za-z_]+)\s*=+\s*$")
SKIP_STEPS = 2  # benchmark_train.sh: analysis.py --skip_steps 2
# What every repo's benchmark_train.sh reads, by position: the lines after the header (the corpus's
# 143 sections all hold these keys in this order; plan/benchmark.py has each script's fields).
FIELDS = ("batch_size", "fp_items", "epoch")
MAX_BATCH_SIZES = 64  # as the spec's bench.batch_sizes


def _error(source: str, line: Optional[int], col: Optional[int], key: Optional[str], message: str, hint=None):
    return SpecError([Problem(source, line, col, f"{SECTION}.{key}" if key else None, message, hint)])


def benchmark_params(text: str, source: str) -> dict[str, tuple[str, int, int]]:
    """{key: (value, line, column of the value)} of the section's lines as benchmark_train.sh
    reads them: the line after the header is batch_size, then fp_items, then epoch, whatever
    they say, and the value is what follows the line's first `:` up to the next ({} without
    the section). A second header, or a line not holding the key the script reads there, is
    refused with its line: the script would read something else than what the line means."""
    from tipcgen.plan.benchmark_train import parser_value

    lines = text.split("\n")
    headers = [i for i, line in enumerate(lines) if (m := _HEADER.match(line.strip())) and m.group(1) == SECTION]
    if not headers:
        return {}
    if len(headers) > 1:
        raise _error(
            source, headers[1] + 1, 1, None,
            f"a second {SECTION} section (the first is on line {headers[0] + 1}): benchmark_train.sh stops, "
            "unable to tell which to read",
        )  # fmt: skip
    params = {}
    for offset, key in enumerate(FIELDS, 1):
        n = headers[0] + offset
        line = lines[n] if n < len(lines) else ""
        found = line.split(":", 1)[0].strip()
        if found != key:
            raise _error(
                source, n + 1, 1, key,
                f"benchmark_train.sh reads line {n + 1} as `{key}`, but it holds {found or line!r}",
                f"the lines after the header are {', '.join(FIELDS)}, in this order",
            )  # fmt: skip
        params[key] = (parser_value(line), n + 1, len(line.split(":", 1)[0]) + 2)
    return params


def _numbers(params: dict, key: str, source: str) -> list[int]:
    """`key`'s values as benchmark_train.sh's arithmetic and lint (TIPC023) read them, in range."""
    from tipcgen.spec.sections import read_params

    value, line, col = params[key]
    view, issues = read_params({key: value})
    if issues and issues[0].rule == "TIPC023":
        raise _error(source, line, col, key, issues[0].message, f"{issues[0].hint}; lint rule TIPC023")
    numbers = list(view.batch_sizes) if key == "batch_size" else [view.epoch] if view.epoch is not None else []
    if not numbers:
        raise _error(
            source, line, col, key, f"`tipcgen bench CONFIG` needs a whole number in `{key}`, not {value.strip()!r}"
        )
    for n in numbers:
        if not 1 <= n <= MAX_RUN_COUNT:
            raise _error(source, line, col, key, f"{n} is not a whole number from 1 to {MAX_RUN_COUNT}")
    if len(set(numbers)) > MAX_BATCH_SIZES:
        raise _error(source, line, col, key, f"{len(set(numbers))} batch sizes; at most {MAX_BATCH_SIZES}")
    return numbers


def bench_section(text: str, source: str, device: str) -> dict:
    params = benchmark_params(text, source)
    if not params:
        raise _error(source, None, None, None, f"no {SECTION} section; `tipcgen bench CONFIG` reads the matrix from it")
    batches = _numbers(params, "batch_size", source)
    epochs = _numbers(params, "epoch", source)
    fp_items = params["fp_items"][0].strip()
    precisions = [p for p in fp_items.split("|") if p in ("fp32", "fp16")] or ["fp32"]
    return {
        "device": device,
        "run_modes": [{"run_mode": "sp"}],
        "batch_sizes": list(dict.fromkeys(batches)),
        "precisions": list(dict.fromkeys(precisions)),
        "max_epochs": epochs[0],
        "warmup_steps": SKIP_STEPS,
    }


def spec_of_config(source: str) -> Spec:
    import yaml

    from tipcgen.check.spec import load_spec_text
    from tipcgen.errors import UsageError
    from tipcgen.importer import import_configs
    from tipcgen.inputs import read_text

    text = read_text(source)
    result = import_configs([source])
    data = result.spec
    if not data.get("suites"):
        raise UsageError(f"{source}: not a train config tipcgen can plan")
    gpu_list = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("gpu_list:")), "")
    data["bench"] = bench_section(text, source, "cpu" if gpu_list == "-1" else "gpu")
    try:
        return load_spec_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), source)
    except SpecError as exc:
        # positions in the spec made in memory mean nothing in the config: name the field only
        raise SpecError([Problem(source, None, None, p.field, p.message, p.hint) for p in exc.problems]) from None
