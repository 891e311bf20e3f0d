"""PaddleSeg's test_paddle2onnx.sh: its 13 lines, and what it runs (a table): convert, then infer
the ONNX model from the repo root; logs in ./test_tipc/output/<model_name>/ (its MODE is unset)."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.steps import ChainTable, Command, Param, Val

# fmt: off
P2O = ("p2o.model_dir", "p2o.model_filename", "p2o.params_filename", "p2o.save_file", "p2o.opset", "p2o.checker")
KEYS = ("model_dir", "model_filename", "params_filename", "save_file", "opset_version", "enable_onnx_checker")
VARS = ("infer_model_dir", "model_filename", "params_filename", "save_file", "opset_version", "enable_onnx_checker")
CONVERT = (Val("p2o.command"), *(Param(role, f"set_{var}") for role, var in zip(P2O, (
    "dirname", "model_filename", "params_filename", "save_model", "opset_version", "enable_onnx_checker"))))
INFER = (Val("python"), Val("p2o.infer.script"), Param("p2o.infer.data", "set_img_dir"),
         Param("p2o.infer.model", "set_model_dir", value="p2o.save_file"))  # the key of one, the value of another
PADDLESEG_PADDLE2ONNX = Layout(
    "paddleseg_paddle2onnx",
    "PaddleSeg paddle2onnx config (13 lines, test_paddle2onnx.sh)",
    (H("paddle2onnx_params"), F("model_name", "model_name"), F("python", "python"), F("p2o.command", "2onnx"),
     *(F(role, f"--{key}") for role, key in zip(P2O, KEYS)),
     F("p2o.infer.script", "inference"), F("p2o.infer.model", "--onnx_file"), F("p2o.infer.data", "--img_path")),
    Dialect(
        family="chain",
        title=("Paddle2ONNX 模型转换与推理测试", "Paddle2ONNX conversion and inference test"),
        runners=("paddleseg_paddle2onnx",),
        values_to_colon=True,
        script="test_paddle2onnx.sh",
        status_log="results_paddle2onnx.log",
        command_roles=("p2o.command",),
        reads=(  # named as in upstream's script
            ("model_name", "value", "model_name"), ("python", "value", "python"),
            ("padlle2onnx_cmd", "value", "p2o.command"), ("inference_py", "value", "p2o.infer.script"),
            ("model_key", "key", "p2o.infer.model"),
            *((f"{var}_{kind}", kind, role) for role, var in zip((*P2O, "p2o.infer.data"), (*VARS, "image_dir"))
              for kind in ("key", "value")),
        ),
        table=ChainTable("paddle2onnx_infer", "./test_tipc/output/{model_name}/",
                         "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
            Command("export", CONVERT, "trans_model.log", "trans_log", shown="{cmd} >{log} 2>&1",
                    note="paddle2onnx: the model to ONNX."),
            Command("infer", INFER, "paddle2onnx_infer_cpu.log", "infer_log", shown="{cmd} > {log} 2>&1 ",
                    note="The ONNX model's inference, from the repo root."),
        )),
    ),
    read_lines=13,
    detect=lambda sig: (
        "paddle2onnx_params with `inference:` and `--onnx_file` keys (PaddleSeg test_paddle2onnx.sh)"
        if "paddle2onnx_params" in sig.headers and sig.key(10) == "inference" and sig.key(11) == "--onnx_file"
        else None
    ),
)
# fmt: on
