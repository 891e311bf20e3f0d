"""The models tutorials' test_paddle2onnx.sh: PaddleSeg's 13 lines (detected as this family's where
the repo's family is known), run its own way (a table): logs in
./test_tipc/output/<model_name>/paddle2onnx_infer/, status lines `...!` without a log."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.chains.paddle2onnx import CONVERT
from tipcgen.dialects.chains.paddleseg_paddle2onnx import INFER, PADDLESEG_PADDLE2ONNX
from tipcgen.dialects.steps import ChainTable, Command

# fmt: off
MODELS_PADDLE2ONNX = replace(
    PADDLESEG_PADDLE2ONNX,
    name="models_paddle2onnx",
    description="models tutorial paddle2onnx config (13 lines, test_paddle2onnx.sh)",
    dialect=replace(PADDLESEG_PADDLE2ONNX.dialect, runners=("models_paddle2onnx",), table=ChainTable(
        "paddle2onnx_infer", "./test_tipc/output/{model_name}/paddle2onnx_infer",
        "{verdict} with command - {model} - {command}!  ", (  # its status_check
            Command("export", CONVERT, "trans_model.log", "_trans_model_log", shown="{cmd} > {log} 2>&1 ",
                    names_log=False, note="paddle2onnx: the model to ONNX."),
            Command("infer", INFER, "paddle2onnx_infer_cpu.log", "_save_log_path", shown="{cmd} > {log} 2>&1 ",
                    names_log=False, note="The ONNX model's inference, from the repo root."),
        ))),
    detect=lambda sig: (
        "paddle2onnx_params with `inference:` and `--onnx_file` keys (the models tutorials' test_paddle2onnx.sh)"
        if PADDLESEG_PADDLE2ONNX.detect is not None and PADDLESEG_PADDLE2ONNX.detect(sig) else None
    ),
)
# fmt: on
