"""Every runner, by the name a dialect's `Dialect.runners` and a spec's `runner:` use (static: no
module is looked up by a string at run time; mypy checks each against `plan.runner.Runner`)."""

from __future__ import annotations

from tipcgen.plan.runner import Runner
from tipcgen.plan.runners import (
    models,
    ocr,
    ocr_head,
    paddleclas,
    paddleclas_cpp_infer,
    paddleclas_dy2static,
    paddleclas_lite_arm,
    paddleclas_paddle2onnx,
    paddleclas_ptq,
    paddleclas_serving_cpp,
    paddleclas_serving_python,
    paddledetection,
    paddleseg,
    paddleseg_paddle2onnx,
    paddlevideo,
)

RUNNERS: dict[str, Runner] = {
    "ocr": ocr,
    "ocr_head": ocr_head,
    "models": models,
    "paddleclas": paddleclas,
    "paddleseg": paddleseg,
    "paddlevideo": paddlevideo,
    "paddledetection": paddledetection,
    # the other chains (dialects/chains/)
    "paddleclas_paddle2onnx": paddleclas_paddle2onnx.RUNNER,
    "paddleclas_cpp_infer": paddleclas_cpp_infer,
    "paddleclas_dy2static": paddleclas_dy2static,
    "paddleclas_lite_arm": paddleclas_lite_arm,
    "paddleclas_serving_python": paddleclas_serving_python,
    "paddleclas_serving_cpp": paddleclas_serving_cpp,
    "paddleclas_ptq": paddleclas_ptq,
    "paddleseg_paddle2onnx": paddleseg_paddle2onnx.RUNNER,
}
