"""PaddleClas's test_ptq_inference_python.sh as a Plan: run the config's kl_quant line (the
post-training quantization of the inference model into `<infer_model>/quant_post_static_model`),
then the inference matrix on the quantized model from deploy/. It reads a train-type config
(dialects/chains/paddleclas_ptq.py) and its MODE names the log directory only: whole_infer.
Logs and the status log (`results_python.log`) under `$(pwd)/test_tipc/output/<model_name>/<MODE>/`.

What sets it apart from test_train_inference_python.sh's whole_infer (runners/paddleclas.py):
its own inference log names (`infer_cpu_usemkldnn_..._batchsize_<n>.log`, no gpu id), no
precision loop on the CPU, and the kl_quant status line shows `>export.log` without a blank.
"""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.steps import refuses_modes_but
from tipcgen.lower.configview import ConfigView
from tipcgen.plan.builder import NO_RUN, Builder
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.plan.runners.classic import shell_eq, shell_ne
from tipcgen.plan.runners.paddleclas import check_quant_dir, quant_cwd
from tipcgen.script.shellwords import ifs_split, set_param

MODE = "whole_infer"
MODES = (MODE,)
TEMPLATE = "runner_paddleclas_ptq.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "  # PaddleClas's status_check
GPU_ENTRIES_BY_LENGTH = False  # gpu_list is not read
CLASSIC = None

# func_inference's commands (as PaddleClas's train script's) and this script's log names.
INFER_CPU = (
    "{python} {script} {use_gpu_key}={use_gpu} {mkldnn_key}={mkldnn} {threads} {model} {batch} {data} "
    "{benchmark} {extra}",
    "infer_cpu_usemkldnn_{mkldnn}_threads_{threads_v}_batchsize_{bs}.log",
)
INFER_GPU = (
    "{python} {script} {use_gpu_key}={use_gpu} {trt} {precision_flag} {model} {batch} {data} {benchmark}",
    "infer_gpu_usetrt_{trt_v}_precision_{precision}_batchsize_{bs}.log",
)

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    Deviation(
        "infer-from-deploy",
        "the inference runs from deploy/ (where `<infer_model>/quant_post_static_model/../../deploy` leads) "
        "whether or not the quantization made that directory; the inference.* links are made only in it",
        "upstream `cd`s into the directory the quantization should have made: when it did not, that cd "
        "fails, the links land in the repo root, `cd ../../deploy` leaves the repo or fails, and the "
        "inference runs from wherever that left it",
        (r"^infer: upstream runs it from \./$",),
    ),
    # Not in the runner oracle's categories (it compares commands, logs and status lines); the
    # whole-tree oracle names the second's refusal of a MODE.
    Deviation(
        "exit-status",
        "the script exits 1 when a step failed (after its summary), 2 on bad arguments or a config it refuses",
        "upstream's exit status is that of its last `cd ..` (or of the kl_quant test): 0 whatever failed",
    ),
    Deviation(
        "whole-infer-only",
        "MODE must be whole_infer (any other: exit 2 before anything runs)",
        "upstream takes any MODE (its comment names whole_infer only) and runs the same steps into "
        "test_tipc/output/<model>/<MODE>/",
        (refuses_modes_but("whole_infer"),),
    ),
)


def _value(v: ConfigView, role: str) -> str:
    return v.value_to_colon(role)


def plan(b: Builder) -> None:
    v = b.v
    b.log_dir = f"{b.root or '.'}/test_tipc/output/{_value(v, 'model_name')}/{b.mode}"
    b.status_log = f"{b.log_dir}/{v.layout.dialect.status_log}"
    kl_quant = _value(v, "trainer.slot1.export")
    if not (shell_ne(kl_quant, "null") and shell_ne(kl_quant, "False")):
        return
    infer_dir = _value(v, "whole_infer.models")
    if b.root is not None:
        check_quant_dir(infer_dir, b.root, b.source)
    log = f"{b.log_dir}/export.log"
    cmd = f"{_value(v, 'python')} {kl_quant}"  # IFS is a newline here: a `|` stays in its word
    b.add("export", cmd, log, NO_RUN, shown=f"{cmd} >{log} 2>&1", status_path=log)
    _inference(b, f"../{infer_dir}/quant_post_static_model", quant_cwd(infer_dir))


def _inference(b: Builder, model_dir: str, cwd: Optional[str]) -> None:
    """func_inference: CPU (mkldnn x threads x batch size) and GPU (TensorRT x precision x batch
    size, skipping precision True without TensorRT) runs; IFS is `|` (a `|` in a command
    separates words)."""
    v = b.v
    common = dict(
        python=_value(v, "python"),
        script=_value(v, "inference.script"),
        use_gpu_key=v.key("inference.use_gpu"),
        model=set_param(v.key("inference.model_dir"), model_dir),
        data=set_param(v.key("inference.data"), _value(v, "inference.data")),
        benchmark=set_param(v.key("inference.benchmark"), _value(v, "inference.benchmark")),
    )
    lists = {r: ifs_split(_value(v, r), "|") for r in ("inference.batch_size", "inference.precision")}
    for use_gpu in ifs_split(_value(v, "inference.use_gpu"), "|"):
        for fields in _points(v, use_gpu, lists):
            p = {**common, **fields, "use_gpu": use_gpu}
            p["batch"] = set_param(v.key("inference.batch_size"), p["bs"])
            template, log_name = INFER_CPU if "mkldnn" in p else INFER_GPU
            log = f"{b.log_dir}/{log_name.format(**p)}"
            cmd = template.format(**p)
            shown = f"{cmd} > {log} 2>&1 "
            b.add("infer", cmd.replace("|", " "), log, NO_RUN, shown=shown, status_path=log, cwd=cwd)


def _points(v: ConfigView, use_gpu: str, lists: dict) -> list[dict]:
    """The loop variables of each inference run of one inference.use_gpu value, in upstream's order."""
    out: list[dict] = []
    if shell_eq(use_gpu, "False") or shell_eq(use_gpu, "cpu"):
        for mkldnn in ifs_split(_value(v, "inference.mkldnn"), "|"):
            for threads in ifs_split(_value(v, "inference.threads"), "|"):
                for bs in lists["inference.batch_size"]:
                    out.append(dict(
                        mkldnn_key=v.key("inference.mkldnn"), mkldnn=mkldnn, threads_v=threads,
                        threads=set_param(v.key("inference.threads"), threads), bs=bs,
                        extra=set_param(v.key("inference.extra"), _value(v, "inference.extra")),
                    ))  # fmt: skip
    elif shell_eq(use_gpu, "True") or shell_eq(use_gpu, "gpu"):
        for trt in ifs_split(_value(v, "inference.tensorrt"), "|"):
            for precision in lists["inference.precision"]:
                if shell_eq(precision, "True") and shell_eq(trt, "False"):
                    continue
                for bs in lists["inference.batch_size"]:
                    out.append(dict(
                        trt_v=trt, trt=set_param(v.key("inference.tensorrt"), trt), precision=precision,
                        precision_flag=set_param(v.key("inference.precision"), precision), bs=bs,
                    ))  # fmt: skip
    # Any other value: upstream says it "does not support hardware other than CPU and GPU".
    return out
