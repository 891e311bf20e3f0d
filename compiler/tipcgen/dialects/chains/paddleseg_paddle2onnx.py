"""PaddleSeg's paddle2onnx chain: the line table its test_paddle2onnx.sh reads (13 lines)."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout

# fmt: off
P2O = ("p2o.model_dir", "p2o.model_filename", "p2o.params_filename", "p2o.save_file", "p2o.opset", "p2o.checker")
ROWS = (
    *(F(role, f"--{key}") for role, key in zip(P2O, ("model_dir", "model_filename", "params_filename",
                                                     "save_file", "opset_version", "enable_onnx_checker"))),
    F("p2o.infer.script", "inference"), F("p2o.infer.model", "--onnx_file"), F("p2o.infer.data", "--img_path"),
)
PADDLESEG_PADDLE2ONNX = Layout(
    "paddleseg_paddle2onnx",
    "PaddleSeg paddle2onnx config (13 lines, test_paddle2onnx.sh)",
    (H("paddle2onnx_params"), F("model_name", "model_name"), F("python", "python"), F("p2o.command", "2onnx"), *ROWS),
    Dialect(
        family="chain",
        title=("Paddle2ONNX 模型转换与推理测试", "Paddle2ONNX conversion and inference test"),
        runners=("paddleseg_paddle2onnx",),  # plan/runners/paddleseg_paddle2onnx.py
        values_to_colon=True,
        script="test_paddle2onnx.sh",
        status_log="results_paddle2onnx.log",
        command_roles=("p2o.command",),
        # named as in upstream's script; the inference model's key takes --save_file's value
        reads=(
            ("model_name", "value", "model_name"), ("python", "value", "python"),
            ("padlle2onnx_cmd", "value", "p2o.command"), ("inference_py", "value", "p2o.infer.script"),
            ("model_key", "key", "p2o.infer.model"),
            *((f"{var}_{kind}", kind, role) for role, var in zip((*P2O, "p2o.infer.data"), (
                "infer_model_dir", "model_filename", "params_filename", "save_file", "opset_version",
                "enable_onnx_checker", "image_dir")) for kind in ("key", "value")),
        ),
    ),
    read_lines=13,
    detect=lambda sig: (
        "paddle2onnx_params with `inference:` and `--onnx_file` keys (PaddleSeg test_paddle2onnx.sh)"
        if "paddle2onnx_params" in sig.headers and sig.key(10) == "inference" and sig.key(11) == "--onnx_file"
        else None
    ),
)
# fmt: on
