"""`tipcgen bench CONFIG`: a legacy config benchmarked the way upstream's benchmark_train.sh
reads it. The config is imported into a one-suite spec (legacy/importer, verified elsewhere to
rebuild byte for byte), and its `train_benchmark_params` section (`batch_size:8|16`,
`fp_items:fp32|fp16`, `epoch:2`) becomes the `bench` section: one process (N1C1, upstream's
single-card run), per-card batch sizes, two warm-up steps skipped (upstream's `--skip_steps 2`).
A `gpu_list` of `-1` means CPU runs.
"""

from __future__ import annotations

import re

from tipcgen.errors import UsageError
from tipcgen.spec.model import Spec

SECTION = "train_benchmark_params"
_HEADER = re.compile(r"^=+\s*([A-Za-z_]+)\s*=+\s*$")
SKIP_STEPS = 2  # benchmark_train.sh: analysis.py --skip_steps 2


def benchmark_params(text: str) -> dict[str, str]:
    """The `key:value` lines of the config's train_benchmark_params section ({} if none)."""
    params: dict[str, str] = {}
    inside = False
    for line in text.splitlines():
        header = _HEADER.match(line.strip())
        if header:
            inside = header.group(1) == SECTION
            continue
        if inside and ":" in line:
            key, value = line.split(":", 1)
            params[key.strip()] = value.strip()
    return params


def _ints(value: str, what: str, source: str) -> list[int]:
    try:
        return [int(v) for v in value.split("|") if v.strip()]
    except ValueError:
        raise UsageError(f"{source}: {SECTION} {what} must be whole numbers separated by `|`, not {value!r}") from None


def bench_section(text: str, source: str, device: str) -> dict:
    params = benchmark_params(text)
    if not params:
        raise UsageError(f"{source}: no {SECTION} section; `tipcgen bench CONFIG` reads the matrix from it")
    batches = _ints(params.get("batch_size", ""), "batch_size", source)
    epochs = _ints(params.get("epoch", "1"), "epoch", source)
    precisions = [p for p in params.get("fp_items", "fp32").split("|") if p in ("fp32", "fp16")] or ["fp32"]
    if not batches or not epochs:
        raise UsageError(f"{source}: {SECTION} needs batch_size and epoch values")
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

    from tipcgen.legacy.importer import import_configs
    from tipcgen.spec.load import load_spec_text, read_text

    text = read_text(source)
    result = import_configs([source])
    data = result.spec
    if not data.get("suites"):
        raise UsageError(f"{source}: not a train config tipcgen can plan")
    gpu_list = next((ln.split(":", 1)[1].strip() for ln in text.splitlines() if ln.startswith("gpu_list:")), "")
    data["bench"] = bench_section(text, source, "cpu" if gpu_list == "-1" else "gpu")
    return load_spec_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), source)
