"""PaddleSeg's test_paddle2onnx.sh as a table (plan/runners/table.py): convert, then infer the
ONNX model from the repo root; logs under ./test_tipc/output/<model_name>/ (upstream's MODE is unset)."""

from __future__ import annotations

from tipcgen.plan.runners.table import ChainTable, Command, Param, Val

# fmt: off
RUNNER = ChainTable(
    script="test_paddle2onnx.sh",
    mode="paddle2onnx_infer",
    log_dir="./test_tipc/output/{model_name}/",
    status_format="{verdict} with command - {model} - {command} - {log}  ",  # PaddleSeg's status_check
    commands=(
        Command("export", (Val("p2o.command"), Param("p2o.model_dir", "set_dirname"), Param("p2o.model_filename"),
                           Param("p2o.params_filename"), Param("p2o.save_file", "set_save_model"),
                           Param("p2o.opset", "set_opset_version"), Param("p2o.checker", "set_enable_onnx_checker")),
                "trans_model.log", "trans_log", shown="{cmd} >{log} 2>&1", note="paddle2onnx: the model to ONNX."),
        Command("infer", (Val("python"), Val("p2o.infer.script"), Param("p2o.infer.data", "set_img_dir"),
                          Param("p2o.infer.model", "set_model_dir", value="p2o.save_file")),
                "paddle2onnx_infer_cpu.log", "infer_log", shown="{cmd} > {log} 2>&1 ",
                note="The ONNX model's inference, from the repo root."),
    ),
)
# fmt: on
