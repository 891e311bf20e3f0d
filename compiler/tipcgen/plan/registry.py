"""Every runner, by the name a dialect's `Dialect.runners` and a spec's `runner:` use (static: no
module is looked up by a string at run time; mypy checks each against `plan.runner.Runner`); a
chain whose Dialect carries a table (dialects/steps.py) is registered by it, run by the one
interpreter (plan/runners/table.py)."""

from __future__ import annotations

from tipcgen.dialects.chains import CHAIN_LAYOUTS
from tipcgen.plan.runner import Runner
from tipcgen.plan.runners import (
    dy2static,
    models,
    ocr,
    ocr_head,
    paddleclas,
    paddleclas_cpp_infer,
    paddleclas_lite_arm,
    paddleclas_ptq,
    paddleclas_serving_cpp,
    paddleclas_serving_python,
    paddledetection,
    paddleseg,
    paddlevideo,
)
from tipcgen.plan.runners.table import TableRunner

RUNNERS: dict[str, Runner] = {
    "ocr": ocr,
    "ocr_head": ocr_head,
    "models": models,
    "paddleclas": paddleclas,
    "paddleseg": paddleseg,
    "paddlevideo": paddlevideo,
    "paddledetection": paddledetection,
    # the other chains (dialects/chains/)
    "paddleclas_cpp_infer": paddleclas_cpp_infer,
    "paddleclas_dy2static": dy2static.PADDLECLAS,
    "paddleseg_dy2static": dy2static.PADDLESEG,
    "paddlevideo_dy2static": dy2static.PADDLEVIDEO,
    "paddleclas_lite_arm": paddleclas_lite_arm,
    "paddleclas_serving_python": paddleclas_serving_python,
    "paddleclas_serving_cpp": paddleclas_serving_cpp,
    "paddleclas_ptq": paddleclas_ptq,
}
# the chains that are tables: registered where they are written (dialects/chains/), nowhere else
RUNNERS.update(
    {
        layout.dialect.runners[0]: TableRunner(layout.dialect.table)
        for layout in CHAIN_LAYOUTS.values()
        if layout.dialect.table
    }
)
