"""Plan a spec's suite or a legacy config file (the input side of `plan` and `run`)."""

from __future__ import annotations

from typing import Optional

from .errors import UsageError
from .layouts import LAYOUTS, get_layout
from .load import read_text
from .lower import config_text
from .plan import Plan, plan_config


def guess_layout(text: str) -> Optional[str]:
    """The layout whose table fits the config: 51-line PaddleOCR-like or the 32-line tutorial."""
    lines = [line for line in text.split("\n") if line != ""]
    core = [line for line in lines if not line.startswith("=") or "train_params" in line
            or "eval_params" in line or "infer_params" in line]
    if len(lines) >= 40 and any(line.startswith("trainer:") for line in lines[:20]):
        idx = next(i for i, line in enumerate(lines) if line.startswith("trainer:"))
        return "paddleocr" if idx >= 13 else "models"
    if 25 <= len(core) <= 40:
        return "models"
    return None


def plan_source(source: str, mode: str, suite: Optional[str] = None, layout: Optional[str] = None,
                gpuid: Optional[str] = None, cuda_visible_devices: Optional[str] = None,
                node_ip: Optional[str] = None, start_port: Optional[str] = None) -> Plan:
    if source.endswith((".yml", ".yaml")):
        from .load import load_spec

        spec = load_spec(source)
        name = suite or next(iter(spec.suites))
        if name not in spec.suites:
            raise UsageError(f"{source}: no suite {name!r} (suites: {', '.join(spec.suites)})")
        lay = get_layout(spec.layout)
        text = config_text(spec.suites[name], lay)
    else:
        text = read_text(source)
        name_ = layout or guess_layout(text)
        if name_ is None:
            raise UsageError(f"{source}: cannot tell the layout of this config; pass --layout "
                             f"({', '.join(LAYOUTS)})")
        if name_ not in LAYOUTS:
            raise UsageError(f"unknown layout {name_!r}; layouts: {', '.join(LAYOUTS)}")
        lay = get_layout(name_)
    label = source if not source.endswith((".yml", ".yaml")) else f"{source} [suite {name}]"
    return plan_config(text, lay, mode, gpuid=gpuid, cuda_visible_devices=cuda_visible_devices,
                       node_ip=node_ip, start_port=start_port, source=label)
