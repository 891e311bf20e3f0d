"""PaddleSeg's test_paddle2onnx.sh: its 13 lines, and what it runs (a table): convert, then infer
the ONNX model from the repo root; logs in ./test_tipc/output/<model_name>/ (its MODE is unset)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import F, Layout
from tipcgen.dialects.chains.paddle2onnx import CONVERT, HEAD, P2O_DIALECT, p2o_reads
from tipcgen.dialects.steps import ChainTable, Command, Param, Val

# fmt: off
INFER = (Val("python"), Val("p2o.infer.script"), Param("p2o.infer.data", "set_img_dir"),
         Param("p2o.infer.model", "set_model_dir", value="p2o.save_file"))  # the key of one, the value of another
PADDLESEG_PADDLE2ONNX = Layout(
    "paddleseg_paddle2onnx",
    "PaddleSeg paddle2onnx config (13 lines, test_paddle2onnx.sh)",
    (*HEAD, F("p2o.infer.script", "inference"), F("p2o.infer.model", "--onnx_file"), F("p2o.infer.data", "--img_path")),
    replace(
        P2O_DIALECT,
        runners=("paddleseg_paddle2onnx",),
        reads=p2o_reads(("p2o.infer.data", "image_dir")),
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
