"""What every family's test_paddle2onnx.sh reads the same way (PaddleSeg's, PaddleVideo's, the
models tutorials'): the conversion's lines and command, and the variables it names them by."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H
from tipcgen.dialects.steps import Param, Val

# fmt: off
P2O = ("p2o.model_dir", "p2o.model_filename", "p2o.params_filename", "p2o.save_file", "p2o.opset", "p2o.checker")
KEYS = ("model_dir", "model_filename", "params_filename", "save_file", "opset_version", "enable_onnx_checker")
VARS = ("infer_model_dir", "model_filename", "params_filename", "save_file", "opset_version", "enable_onnx_checker")
CONVERT = (Val("p2o.command"), *(Param(role, f"set_{var}") for role, var in zip(P2O, (
    "dirname", "model_filename", "params_filename", "save_model", "opset_version", "enable_onnx_checker"))))
HEAD = (H("paddle2onnx_params"), F("model_name", "model_name"), F("python", "python"), F("p2o.command", "2onnx"),
        *(F(role, f"--{key}") for role, key in zip(P2O, KEYS)))  # the conversion's lines, as every family's


def p2o_reads(*more: tuple) -> tuple:
    """What a paddle2onnx script reads, named as upstream's: the conversion's lines, the inference
    script and model key, then each (role, variable stem) of `more` as a key and a value."""
    return (
        ("model_name", "value", "model_name"), ("python", "value", "python"),
        ("padlle2onnx_cmd", "value", "p2o.command"), ("inference_py", "value", "p2o.infer.script"),
        ("model_key", "key", "p2o.infer.model"),
        *((f"{var}_{kind}", kind, role) for role, var in (*zip(P2O, VARS), *more) for kind in ("key", "value")),
    )
# What such a script is, but its runner, reads and table (each family's module adds them).
P2O_DIALECT = Dialect(
    family="chain",
    title=("Paddle2ONNX 模型转换与推理测试", "Paddle2ONNX conversion and inference test"),
    values_to_colon=True,
    script="test_paddle2onnx.sh",
    status_log="results_paddle2onnx.log",
    command_roles=("p2o.command",),
)
# fmt: on
