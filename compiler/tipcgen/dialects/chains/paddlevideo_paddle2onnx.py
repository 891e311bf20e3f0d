"""PaddleVideo's test_paddle2onnx.sh: its 14 lines, and what it runs (a table): convert, then infer
the ONNX model with the model's config; logs in ./log/<model_name>/<MODE>/, status
lines without a log (its status_check gets four arguments)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import F, Layout
from tipcgen.dialects.chains.paddle2onnx import CONVERT, HEAD, P2O_DIALECT, p2o_reads
from tipcgen.dialects.steps import ChainTable, Command, Param, Val

# fmt: off
INFER = (Val("python"), Val("p2o.infer.script"), Param("p2o.infer.yaml", "set_config"),
         Param("p2o.infer.data", "set_input_file"), Param("p2o.infer.model", "set_model_dir", value="p2o.save_file"))
PADDLEVIDEO_PADDLE2ONNX = Layout(
    "paddlevideo_paddle2onnx",
    "PaddleVideo paddle2onnx config (14 lines, test_paddle2onnx.sh)",
    (*HEAD, F("p2o.infer.script", "inference"), F("p2o.infer.yaml", "--config"), F("p2o.infer.model", "--onnx_file"),
     F("p2o.infer.data", "--input_file")),
    replace(
        P2O_DIALECT,
        runners=("paddlevideo_paddle2onnx",),
        reads=p2o_reads(("p2o.infer.yaml", "config"), ("p2o.infer.data", "input_file")),
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
