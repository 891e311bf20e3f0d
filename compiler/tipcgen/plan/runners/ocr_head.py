"""PaddleOCR's runner today (upstream's test_tipc at head): the seed-era script (runners/ocr.py)
with the differences of `HEAD` (plan) and of templates/runner_ocr_head.sh.j2's table (bash):
the train command no longer passes the autocast flag, inference logs name the run's GPUs
(`python_infer_cpu_gpus_<gpu>_...`, whole_infer's are 0), whole_infer's export log is
`<LOG_PATH>_export_<n>.log`, every status line ends ` - <its log> `, and the train step's log is
`<save_log>.log`."""

from tipcgen.plan.builder import Builder, OcrScript
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.plan.runners.classic import plan_classic
from tipcgen.spec.modes import MODES as BASE_MODES

MODES = (*BASE_MODES, "benchmark_train")  # benchmark_train: what test_tipc/benchmark_train.sh runs

TEMPLATE = "runner_ocr_head.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} "
GPU_ENTRIES_BY_LENGTH = False  # gpu_list entries read by structure (see plan/runner.py)

HEAD = OcrScript(
    train_autocast=False,
    log_in_status=True,
    train_log="{save_log}.log",
    infer_gpu="0",
    whole_infer_export_log="{log_dir}_export_{count}.log",
)
CLASSIC = HEAD  # the plan and the bash template both read it

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    Deviation(
        "train-status-from-trainer",
        "the train status line reports the trainer's exit code; its output goes to the terminal and "
        "`<save_log>.log` (tee)",
        "upstream reports the exit code of `cat <save_log>/train.log >> <save_log>.log`: a failed "
        "training that wrote some train.log passes, a trainer that logs elsewhere fails",
        (r"^status: train verdict upstream 'Run failed' vs plan 'Run successfully'",),
    ),
)


def plan(b: Builder) -> None:
    b.script = HEAD
    plan_classic(b)


__all__ = ["CLASSIC", "DEVIATIONS", "GPU_ENTRIES_BY_LENGTH", "HEAD", "MODES", "STATUS_FORMAT", "TEMPLATE", "plan"]
