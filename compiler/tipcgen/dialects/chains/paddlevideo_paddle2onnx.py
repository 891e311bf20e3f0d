"""PaddleVideo's test_paddle2onnx.sh: its 14 lines, and what it runs (a table): convert, then infer
the ONNX model with the model's config; logs in ./log/<model_name>/<MODE>/, status
lines without a log (its status_check gets four arguments)."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.chains.paddleseg_paddle2onnx import CONVERT, KEYS, P2O, VARS
from tipcgen.dialects.steps import ChainTable, Command, Param, Val

# fmt: off
INFER = (Val("python"), Val("p2o.infer.script"), Param("p2o.infer.yaml", "set_config"),
         Param("p2o.infer.data", "set_input_file"), Param("p2o.infer.model", "set_model_dir", value="p2o.save_file"))
PADDLEVIDEO_PADDLE2ONNX = Layout(
    "paddlevideo_paddle2onnx",
    "PaddleVideo paddle2onnx config (14 lines, test_paddle2onnx.sh)",
    (H("paddle2onnx_params"), F("model_name", "model_name"), F("python", "python"), F("p2o.command", "2onnx"),
     *(F(role, f"--{key}") for role, key in zip(P2O, KEYS)), F("p2o.infer.script", "inference"),
     F("p2o.infer.yaml", "--config"), F("p2o.infer.model", "--onnx_file"), F("p2o.infer.data", "--input_file")),
    Dialect(
        family="chain",
        title=("Paddle2ONNX 模型转换与推理测试", "Paddle2ONNX conversion and inference test"),
        runners=("paddlevideo_paddle2onnx",),
        values_to_colon=True,
        script="test_paddle2onnx.sh",
        status_log="results_paddle2onnx.log",
        command_roles=("p2o.command",),
        reads=(  # named as in upstream's script
            ("model_name", "value", "model_name"), ("python", "value", "python"),
            ("padlle2onnx_cmd", "value", "p2o.command"), ("inference_py", "value", "p2o.infer.script"),
            ("model_key", "key", "p2o.infer.model"),
            *((f"{var}_{kind}", kind, role) for role, var in zip((*P2O, "p2o.infer.yaml", "p2o.infer.data"),
                                                                 (*VARS, "config", "input_file"))
              for kind in ("key", "value")),
        ),
        table=ChainTable("paddle2onnx_infer", "./log/{model_name}/{mode}",
                         "{verdict} with command - {model} - {command} - {log} ", (  # its status_check
            Command("export", CONVERT, "trans_model.log", "trans_log", shown="{cmd} > {log} 2>&1 ", names_log=False,
                    note="paddle2onnx: the model to ONNX."),
            Command("infer", INFER, "paddle2onnx_infer_cpu.log", "infer_log", shown="{cmd} > {log} 2>&1 ",
                    names_log=False, note="The ONNX model's inference with the model's config."),
        )),
    ),
    read_lines=14,
    detect=lambda sig: (
        "paddle2onnx_params with `inference:`, `--config` and `--onnx_file` keys (PaddleVideo test_paddle2onnx.sh)"
        if "paddle2onnx_params" in sig.headers and sig.key(10) == "inference" and sig.key(11) == "--config"
        and sig.key(12) == "--onnx_file" else None
    ),
)
# fmt: on
