"""PaddleClas's test_paddle2onnx.sh as a table (plan/runners/table.py): convert the inference
model to ONNX with `paddle2onnx`, then (unless the config's `inference:` is null) run the repo's
predictor on the ONNX model from deploy/. Its mode is fixed (`paddle2onnx_infer`): the script
reads only its config argument. Logs and the status log (`results_paddle2onnx.log`) under
`$(pwd)/test_tipc/output/<model_name>/paddle2onnx_infer/`.
"""

from __future__ import annotations

from tipcgen.plan.runner import Deviation
from tipcgen.plan.runners.table import ChainTable, Command, Lit, Param, Val

# fmt: off
RUNNER = ChainTable(
    script="test_paddle2onnx.sh",
    mode="paddle2onnx_infer",
    log_dir="{root}/test_tipc/output/{model_name}/{mode}",
    status_format="{verdict} with command - {model} - {command} - {log} ! ",  # PaddleClas's status_check
    commands=(
        Command(
            "export",
            (
                Val("p2o.command"), Param("p2o.model_dir", "set_dirname"), Param("p2o.model_filename"),
                Param("p2o.params_filename"), Param("p2o.save_file", "set_save_model"),
                Param("p2o.opset", "set_opset_version"), Param("p2o.checker", "set_enable_onnx_checker"),
                Lit("--enable_dev_version=False"),
            ),
            "trans_model.log",
            "trans_log",
            note="paddle2onnx: the inference model to ONNX.",
        ),
        Command(
            "infer",
            (
                Val("python"), Val("p2o.infer.script"), Lit("-o"), Param("p2o.infer.model_dir", "set_model_dir"),
                Lit("-o"), Param("p2o.infer.use_onnx"), Lit("-o"), Param("p2o.infer.device", "set_hardware"),
                Param("p2o.infer.config", "set_inference_config"),
            ),
            "paddle2onnx_infer_cpu.log",
            "infer_log",
            shown="cd deploy && {cmd} > {log} 2>&1 && cd ../",
            cwd="deploy",
            unless_null="p2o.infer.script",
            note="The predictor on the ONNX model, from deploy/; its status line reports its own exit code\n"
            "(upstream's reuses the conversion's).",
        ),
    ),
    deviations=(
        Deviation(
            "onnx-infer-own-status",
            "the inference step's status line reports the inference's own exit code",
            "upstream's status_check for the inference reuses the conversion's `$last_status`: an "
            "inference that fails after a good conversion is reported as `Run successfully`, one that "
            "passes after a failed conversion as `Run failed`",
            (
                r"^status: infer verdict upstream 'Run successfully' vs plan 'Run failed'",
                r"^status: infer verdict upstream 'Run failed' vs plan 'Run successfully'",
            ),
        ),
    ),
)
# fmt: on
