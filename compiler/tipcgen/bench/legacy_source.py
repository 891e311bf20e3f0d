"""`tipcgen bench CONFIG`: a legacy config benchmarked the way upstream's benchmark_train.sh
reads it. The config is imported into a one-suite spec (importer/, verified elsewhere to
rebuild byte for byte), and its `train_benchmark_params` section (`batch_size:8|16`,
`fp_items:fp32|fp16`, `epoch:2`) becomes the `bench` section: one process (N1C1, upstream's
single-card run), per-card batch sizes, two warm-up steps skipped (upstream's `--skip_steps 2`).
A `gpu_list` of `-1` means CPU runs.
"""

from __future__ import annotations

import os
from typing import Optional

from tipcgen.errors import Problem, SpecError
from tipcgen.spec.bench_section import MAX_RUN_COUNT
from tipcgen.spec.ir import Spec

SECTION = "train_benchmark_params"
SKIP_STEPS = 2  # benchmark_train.sh: analysis.py --skip_steps 2
# What every repo's benchmark_train.sh reads, by position: the lines after the header (the corpus's
# 143 sections all hold these keys in this order; plan/benchmark.py has each script's fields).
FIELDS = ("batch_size", "fp_items", "epoch")
MAX_BATCH_SIZES = 64  # as the spec's bench.batch_sizes


def _error(source: str, line: Optional[int], col: Optional[int], key: Optional[str], message: str, hint=None):
    return SpecError([Problem(source, line, col, f"{SECTION}.{key}" if key else None, message, hint)])


def benchmark_params(text: str, source: str, grep_word: bool = True) -> dict[str, tuple[str, int, int]]:
    """{key: (value, line, column of the value)} of the section's lines as benchmark_train.sh
    reads them (plan/benchmark_train.py's one positional reader: the lines after the header are
    batch_size, then fp_items, then epoch, whatever they say, and the value is what follows the
    line's first `:` up to the next; {} without the section). A second header, or a line not
    holding the key the script reads there, is refused with its line: the script would read
    something else than what the line means. `grep_word`: the dialect's script finds the header
    with `grep -w` (see BenchDialect)."""
    from tipcgen.plan.benchmark_train import parser_value, section_header_lines, section_rows

    headers = section_header_lines(text, grep_word)
    if not headers:
        return {}
    if len(headers) > 1:
        raise _error(
            source, headers[1], 1, None,
            f"a second {SECTION} section (the first is on line {headers[0]}): benchmark_train.sh stops, "
            "unable to tell which to read",
        )  # fmt: skip
    params = {}
    last = len(text.split("\n"))
    for key, line, number in section_rows(FIELDS, text, headers[0]):
        found = line.split(":", 1)[0].strip()
        where = number if number is not None else last
        if found != key:
            raise _error(
                source, where, 1, key,
                f"benchmark_train.sh reads line {where} as `{key}`, but it holds {found or line!r}",
                f"the lines after the header are {', '.join(FIELDS)}, in this order",
            )  # fmt: skip
        params[key] = (parser_value(line), where, len(line.split(":", 1)[0]) + 2)
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


def bench_section(text: str, source: str, device: str, grep_word: bool = True) -> dict:
    params = benchmark_params(text, source, grep_word)
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
    from tipcgen.dialects import get_layout
    from tipcgen.errors import UsageError
    from tipcgen.importer import import_configs
    from tipcgen.inputs import read_text
    from tipcgen.lower.configview import ConfigView
    from tipcgen.plan.benchmark_train import BENCH

    text = read_text(source)
    result = import_configs([source])
    data = result.spec
    if not data.get("suites"):
        raise UsageError(f"{source}: not a train config tipcgen can plan")
    layout = get_layout(result.layouts[os.path.basename(source)])
    gpu_list = ConfigView.parse(text, layout).value("gpu_list").strip()  # as the runner reads it
    bench = BENCH.get(layout.name)
    data["bench"] = bench_section(
        text, source, "cpu" if gpu_list == "-1" else "gpu", bench.grep_word if bench else True
    )
    try:
        return load_spec_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), source)
    except SpecError as exc:
        # positions in the spec made in memory mean nothing in the config: name the field only
        raise SpecError([Problem(source, None, None, p.field, p.message, p.hint) for p in exc.problems]) from None
