"""PaddleClas's paddle2onnx chain: the line table test_paddle2onnx.sh reads."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout

# PaddleClas test_paddle2onnx.sh: `awk 'NR==1, NR==16'`, lines[1..15]; lines[10] (the inference
# model's URL) is read by prepare.sh only.
PADDLECLAS_PADDLE2ONNX = Layout(
    "paddleclas_paddle2onnx",
    "PaddleClas paddle2onnx config (16 lines, test_paddle2onnx.sh)",
    (
        H("paddle2onnx_params"),
        F("model_name", "model_name"),
        F("python", "python"),
        F("p2o.command", "2onnx"),
        F("p2o.model_dir", "--model_dir"),
        F("p2o.model_filename", "--model_filename"),
        F("p2o.params_filename", "--params_filename"),
        F("p2o.save_file", "--save_file"),
        F("p2o.opset", "--opset_version"),
        F("p2o.checker", "--enable_onnx_checker"),
        F("infer_model_url", "inference_model_url"),
        F("p2o.infer.script", "inference"),
        F("p2o.infer.use_onnx"),
        F("p2o.infer.model_dir"),
        F("p2o.infer.device"),
        F("p2o.infer.config"),
    ),
    Dialect(
        family="chain",
        title=("Paddle2ONNX 模型转换与推理测试", "Paddle2ONNX conversion and inference test"),
        runners=("paddleclas_paddle2onnx",),  # plan/runners/paddleclas_paddle2onnx.py
        values_to_colon=True,
        script="test_paddle2onnx.sh",
        status_log="results_paddle2onnx.log",
        command_roles=("p2o.command",),
        # named as in upstream's script (its `padlle2onnx_cmd` spelling included)
        reads=(
            ("model_name", "value", "model_name"),
            ("python", "value", "python"),
            ("padlle2onnx_cmd", "value", "p2o.command"),
            ("infer_model_dir_key", "key", "p2o.model_dir"),
            ("infer_model_dir_value", "value", "p2o.model_dir"),
            ("model_filename_key", "key", "p2o.model_filename"),
            ("model_filename_value", "value", "p2o.model_filename"),
            ("params_filename_key", "key", "p2o.params_filename"),
            ("params_filename_value", "value", "p2o.params_filename"),
            ("save_file_key", "key", "p2o.save_file"),
            ("save_file_value", "value", "p2o.save_file"),
            ("opset_version_key", "key", "p2o.opset"),
            ("opset_version_value", "value", "p2o.opset"),
            ("enable_onnx_checker_key", "key", "p2o.checker"),
            ("enable_onnx_checker_value", "value", "p2o.checker"),
            ("inference_py", "value", "p2o.infer.script"),
            ("use_onnx_key", "key", "p2o.infer.use_onnx"),
            ("use_onnx_value", "value", "p2o.infer.use_onnx"),
            ("inference_model_dir_key", "key", "p2o.infer.model_dir"),
            ("inference_model_dir_value", "value", "p2o.infer.model_dir"),
            ("inference_hardware_key", "key", "p2o.infer.device"),
            ("inference_hardware_value", "value", "p2o.infer.device"),
            ("inference_config_key", "key", "p2o.infer.config"),
            ("inference_config_value", "value", "p2o.infer.config"),
        ),
    ),
    read_lines=16,
    detect=lambda sig: (
        "paddle2onnx_params with `inference:` and `Global.` keys (PaddleClas test_paddle2onnx.sh)"
        if "paddle2onnx_params" in sig.headers and sig.key(11) == "inference" and sig.key(12).startswith("Global.")
        else None
    ),
)
