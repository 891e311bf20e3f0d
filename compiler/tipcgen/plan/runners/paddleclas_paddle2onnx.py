"""PaddleClas's test_paddle2onnx.sh as a Plan: convert the inference model to ONNX with
`paddle2onnx`, then (unless the config's `inference:` is null) run the repo's predictor on the
ONNX model from deploy/. Its mode is fixed (`paddle2onnx_infer`): the script reads only its
config argument. Logs and the status log (`results_paddle2onnx.log`) under
`$(pwd)/test_tipc/output/<model_name>/paddle2onnx_infer/`.
"""

from __future__ import annotations

from tipcgen.lower.configview import ConfigView
from tipcgen.plan.builder import Builder
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.script.shellwords import set_param

MODE = "paddle2onnx_infer"
MODES = (MODE,)
TEMPLATE = "runner_paddleclas_paddle2onnx.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "  # PaddleClas's status_check
GPU_ENTRIES_BY_LENGTH = False  # no gpu_list in this chain
CLASSIC = None
STATUS_LOG = "results_paddle2onnx.log"

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


def _value(v: ConfigView, role: str) -> str:
    """func_parser_value: the line's text between its first and second colon."""
    return v.value(role).split(":", 1)[0]


def _key(v: ConfigView, role: str) -> str:
    return v.key(role)


def plan(b: Builder) -> None:
    v = b.v
    b.log_dir = f"{b.root or '.'}/test_tipc/output/{_value(v, 'model_name')}/{MODE}"
    b.status_log = f"{b.log_dir}/{STATUS_LOG}"
    flags = [
        set_param(_key(v, role), _value(v, role))
        for role in ("p2o.model_dir", "p2o.model_filename", "p2o.params_filename", "p2o.save_file", "p2o.opset")
    ]
    flags.append(set_param(_key(v, "p2o.checker"), _value(v, "p2o.checker")))
    convert = f"{_value(v, 'p2o.command')} {' '.join(flags)} --enable_dev_version=False"
    trans_log = f"{b.log_dir}/trans_model.log"
    b.add("export", convert, trans_log, shown=f"{convert} > {trans_log} 2>&1", status_path=trans_log)
    script = _value(v, "p2o.infer.script")
    if script == "null":
        return
    log = f"{b.log_dir}/paddle2onnx_infer_cpu.log"
    model_dir = set_param(_key(v, "p2o.infer.model_dir"), _value(v, "p2o.infer.model_dir"))
    use_onnx = set_param(_key(v, "p2o.infer.use_onnx"), _value(v, "p2o.infer.use_onnx"))
    device = set_param(_key(v, "p2o.infer.device"), _value(v, "p2o.infer.device"))
    config = set_param(_key(v, "p2o.infer.config"), _value(v, "p2o.infer.config"))
    infer = f"{_value(v, 'python')} {script} -o {model_dir} -o {use_onnx} -o {device} {config}"
    shown = f"cd deploy && {infer} > {log} 2>&1 && cd ../"
    b.add("infer", infer, log, shown=shown, status_path=log, cwd="deploy")
