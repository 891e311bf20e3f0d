"""PaddleClas's paddle2onnx chain: the line table test_paddle2onnx.sh reads, and what it runs (a
table: plan/runners/table.py). It converts the inference model to ONNX with `paddle2onnx`, then
(unless the config's `inference:` is null) runs the repo's predictor on the ONNX model from
deploy/. Its mode is fixed (`paddle2onnx_infer`): the script reads only its config argument. Logs
and the status log (`results_paddle2onnx.log`) under `$(pwd)/test_tipc/output/<model_name>/paddle2onnx_infer/`.
"""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.steps import ChainTable, Command, Deviation, Lit, Param, Val

# fmt: off
TABLE = ChainTable(
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
        runners=("paddleclas_paddle2onnx",),
        table=TABLE,
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
