"""PaddleClas's test_paddle2onnx.sh as a Plan: convert the inference model to ONNX with
`paddle2onnx`, then (unless the config's `inference:` is null) run the repo's predictor on the
ONNX model from deploy/. Its mode is fixed (`paddle2onnx_infer`): the script reads only its
config argument. Logs and the status log (`results_paddle2onnx.log`) under
`$(pwd)/test_tipc/output/<model_name>/paddle2onnx_infer/`.
"""

from __future__ import annotations

from tipcgen.plan.builder import Builder
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.script.shellwords import set_param

MODE = "paddle2onnx_infer"
MODES = (MODE,)
TEMPLATE = "runner_paddleclas_paddle2onnx.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "  # PaddleClas's status_check
GPU_ENTRIES_BY_LENGTH = False  # no gpu_list in this chain
CLASSIC = None

DEVIATIONS = (
    *COMMON_DEVIATIONS,
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
)


def plan(b: Builder) -> None:
    v = b.v
    b.log_dir = f"{b.root or '.'}/test_tipc/output/{v.value_to_colon('model_name')}/{MODE}"
    b.status_log = f"{b.log_dir}/{v.layout.dialect.status_log}"
    roles = ("p2o.model_dir", "p2o.model_filename", "p2o.params_filename", "p2o.save_file", "p2o.opset", "p2o.checker")
    flags = [set_param(v.key(role), v.value_to_colon(role)) for role in roles]
    convert = f"{v.value_to_colon('p2o.command')} {' '.join(flags)} --enable_dev_version=False"
    trans_log = f"{b.log_dir}/trans_model.log"
    b.add("export", convert, trans_log, shown=f"{convert} > {trans_log} 2>&1", status_path=trans_log)
    script = v.value_to_colon("p2o.infer.script")
    if script == "null":
        return
    log = f"{b.log_dir}/paddle2onnx_infer_cpu.log"
    model_dir, use_onnx, device, config = (
        set_param(v.key(role), v.value_to_colon(role))
        for role in ("p2o.infer.model_dir", "p2o.infer.use_onnx", "p2o.infer.device", "p2o.infer.config")
    )
    infer = f"{v.value_to_colon('python')} {script} -o {model_dir} -o {use_onnx} -o {device} {config}"
    shown = f"cd deploy && {infer} > {log} 2>&1 && cd ../"
    b.add("infer", infer, log, shown=shown, status_path=log, cwd="deploy")
