"""PaddleClas's test_lite_arm_cpu_cpp.sh as a Plan: from deploy/lite/, point the predictor's
config.txt at the device (runtime device, model file, label file, benchmark on), then for each
threads x batch size x precision of the config: set them in config.txt, `adb push` it to the
device's work path and run the predictor there with `adb shell` (its output to a log named by
the combination). Its mode is fixed (`lite_infer`): the script reads only its config argument.
Logs and the status log (`results.log`) under `$(pwd)/deploy/lite/output/`.

Commands only: the steps need an ARM device on adb (and what prepare pushed to it); tipcgen
plans and generates them and the oracle compares them with upstream's, nothing here runs them.
"""

from __future__ import annotations

import re
from typing import Optional

from tipcgen.errors import UsageError
from tipcgen.plan.builder import Builder
from tipcgen.plan.runner import COMMON_DEVIATIONS, EDITS_AS_DATA, Deviation
from tipcgen.script.shellwords import ifs_split, sed_quoted
from tipcgen.spec.policy import word_problem

MODE = "lite_infer"
MODES = (MODE,)
TEMPLATE = "runner_paddleclas_lite_arm.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "  # PaddleClas's status_check
GPU_ENTRIES_BY_LENGTH = False  # no gpu_list in this chain
CLASSIC = None

WORK_DIR = "deploy/lite"
CONFIG = "config.txt"  # the predictor's config, in WORK_DIR
# For the oracle (tipcgen.migrate.oracle): upstream runs no config edit on Linux (see
# lite-config-edits); our `sed -i` steps stand for nothing of upstream's.
ORACLE_REPLACED = (("config.txt edits: upstream none, plan sed -i", r"^$", r"^sed -i "),)
ORACLE_TOOLS = ("adb", "sed")  # recorded like the interpreter
STATUS_DIR = f"{WORK_DIR}/output"  # the script header names it
ORACLE_LOG_DIRS = (f"{WORK_DIR}/output",)  # where its logs are written (upstream's `$(pwd)/output`)
# What a PaddleClas checkout holds that the script reads (the predictor's config, as in deploy/lite/).
ORACLE_CHECKOUT = {
    f"{WORK_DIR}/{CONFIG}": (
        "clas_model_file ./MobileNetV3_large_x1_0.nb\n"
        "label_path ./imagenet1k_label_list.txt\n"
        "resize_short_size 256\ncrop_size 224\nvisualize 0\nnum_threads 1\nbatch_size 1\n"
        "precision FP32\nruntime_device arm_cpu\nenable_benchmark 0\ntipc_benchmark 0\n"
    )
}

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    EDITS_AS_DATA,
    Deviation(
        "lite-config-edits",
        "config.txt is edited as upstream's macOS branch does, on every system: runtime_device arm_cpu, "
        "clas_model_file <work path><model>.nb, label_path <work path><label file name>, tipc_benchmark 1, "
        "then num_threads, batch_size and precision per run (`sed -i`, no status line)",
        'upstream\'s Linux branch tests `[ $(expr substr $(uname -s) 1 5) = "Linux"]` (no blank before `]`): '
        "`[` fails with `missing ]` on every run, so on Linux no edit is made and every run pushes the same "
        "config.txt whatever its threads, batch size and precision",
        (r"^config\.txt edits: upstream none, plan sed -i$",),
    ),
    Deviation(
        "lite-status-model-name",
        "status lines name the config's model (clas_model_file)",
        "upstream passes `$model_name` to status_check, a variable the script never sets: its status lines "
        "read `with command -  - adb shell ...`",
        (
            r"^status: other line [\"']\\x1b\[33m Run (successfully|failed) with command -  - adb shell",
            r"^status: number of lines$",
        ),
    ),
    Deviation(
        "lite-push-counted",
        "a failed `adb push` counts as a failed step (the script then exits 1); it writes no status line, as upstream",
        "upstream ignores the push's exit code: the predictor then runs on the previous config.txt",
        (),
    ),
)


# What reaches the device's shell line or a sed replacement: checked item by item (the lists by
# `|`; inference_cmd's words may be options) by the spec's own rule (spec/policy.py word_problem),
# so a raw config is refused where a spec would be; the script checks the same (tipc_remote_ok).
REMOTE_ROLES = ("model_name", "lite.runtime_device", "lite.work_path", "lite.inference_cmd", "lite.threads",
                "lite.batch_size", "lite.precision")  # fmt: skip
COMMAND_ROLE = "lite.inference_cmd"


def remote_problem(role: str, value: str) -> Optional[str]:
    """Why a Lite config's value cannot be passed to the device as data (None: it can)."""
    items = re.split(r"[ |]+", value.strip(" |")) if role == COMMAND_ROLE else value.split("|")
    return next((p for p in (word_problem(item, role == COMMAND_ROLE) for item in items) if p), None)


def plan(b: Builder) -> None:
    v = b.v
    b.log_dir = f"{b.root or '.'}/{WORK_DIR}/output"
    b.status_log = f"{b.log_dir}/{v.layout.dialect.status_log}"
    model = v.value_to_colon("model_name")
    device = v.value_to_colon("lite.runtime_device")
    work = v.value_to_colon("lite.work_path")
    cmd = v.value_to_colon("lite.inference_cmd")
    threads, batches, precisions = (
        ifs_split(v.value_to_colon(r), "|") for r in ("lite.threads", "lite.batch_size", "lite.precision")
    )
    for role in REMOTE_ROLES:
        problem = remote_problem(role, v.value(role))
        if problem:
            raise UsageError(
                f"{b.source}: {v.key(role)}:{v.value(role)}: {problem}: its value goes into the device's "
                "shell line (`adb shell '...'`) and a sed replacement, where only ASCII letters, digits "
                "and `._+/=,:@%-` pass as data"
            )

    def edit(expression: str) -> None:
        b.add("config", f"sed -i '{expression}' {CONFIG}", None, cwd=WORK_DIR, writes_status=False)

    esc = sed_quoted(work)
    edit("s/runtime_device.*/runtime_device arm_cpu/")
    edit(f"s/clas_model_file.*/clas_model_file {esc}{sed_quoted(model)}.nb/")
    edit(f"s/label_path.*[ \\/]\\([^ \\/]*\\)$/label_path {esc}\\1/")  # the label file by its name
    edit("s/tipc_benchmark.*/tipc_benchmark 1/")
    # upstream: `echo ${inference_cmd} | awk '{print path $1" "path $2" "path $3}'` (IFS=|)
    words = [w for w in re.split(r"[ \t\n]+", cmd.replace("|", " ")) if w]
    words += [""] * (3 - len(words))
    remote = " ".join(f"{work}{word}" for word in words[:3])
    for n in threads:
        edit(f"s/num_threads.*/num_threads {sed_quoted(n)}/")
        for bs in batches:
            edit(f"s/batch_size.*/batch_size {sed_quoted(bs)}/")
            for p in precisions:
                edit(f"s/precision.*/precision {sed_quoted(p)}/")
                log = f"{b.log_dir}/lite_{model}_runtime_device_{device}_precision_{p}_batchsize_{bs}_threads_{n}.log"
                b.add("push", f"adb push {CONFIG} {work}", None, cwd=WORK_DIR, writes_status=False)
                shell = f"adb shell 'export LD_LIBRARY_PATH={work}; {remote}'"
                b.add("infer", shell, log, shown=f"{shell} > {log} 2>&1", status_path=log, cwd=WORK_DIR)
