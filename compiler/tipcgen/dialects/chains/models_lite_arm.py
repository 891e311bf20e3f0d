"""The models tutorials' test_lite_arm_cpu_cpp.sh: PaddleClas's 8 Lite lines (the same line table),
and what it runs (a table). From the repo root it points the predictor's own config.txt at the
device (runtime_device arm_cpu, clas_model_file <work path><model file>), then for each threads x
batch size x precision sets them in config.txt, `adb push`es it to the device's work path and runs
the predictor there (`adb shell`: the first three words of inference_cmd, each under the work path,
with LD_LIBRARY_PATH the work path), its output to a log named by the combination. The edits and the
push get no status line and their exit codes are not read, as upstream's. Logs and status lines (which
name no model and no log) in ./test_tipc/output//arm_infer/ (upstream's `${model_name}`, never set)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import Layout
from tipcgen.dialects.chains.paddleclas_lite_arm import PADDLECLAS_LITE_ARM
from tipcgen.dialects.steps import ChainTable, Command, Deviation, Item, Join, Lit, Loop, Prefixed, Sed, Val

# fmt: off
CONFIG = "config.txt"  # the predictor's own config, in the repo root


def edit(expression: tuple, note: str) -> Command:
    """`sed -i '<expression>' config.txt` (no status line, its exit code unread)."""
    return Command("config", (Lit("sed"), Lit("-i"), Join((Lit("'"), *expression, Lit("'"))), Lit(CONFIG)), "", "",
                   shown="{cmd}", names_log=False, quiet=True, note=note)


def setting(name: str, var: str) -> Command:
    return edit((Lit(f"s/{name}.*/{name} "), Sed(Item(var), f"sed_{var}"), Lit("/")), f"config.txt's {name}.")


WORK = Val("lite.work_path")
REMOTE = Join((Lit("'export LD_LIBRARY_PATH="), WORK, Lit("; "),
               Prefixed("lite.inference_cmd", "lite.work_path", 3, "real_inference_cmd"), Lit("'")))
LOG = ("lite_{model_name}_runtime_device_{lite.runtime_device}_precision_{precision}_batchsize_{batch_size}"
       "_threads_{threads}.log")
TABLE = ChainTable("lite_infer", "./test_tipc/output//arm_infer", "{verdict} with command -  - {command}!  ", (
    edit((Lit("s/runtime_device.*/runtime_device arm_cpu/"),), "config.txt's runtime device: the ARM CPU."),
    edit((Lit("s/clas_model_file.*/clas_model_file  "), Sed(WORK, "sed_work_path"), Sed(Val("model_name"), "sed_model"),
          Lit("/")), "config.txt's model file: the model under the device's work path."),
    Loop("lite.threads", "threads", (
        setting("num_threads", "threads"),
        Loop("lite.batch_size", "batch_size", (
            setting("batch_size", "batch_size"),
            Loop("lite.precision", "precision", (
                setting("precision", "precision"),
                Command("push", (Lit("adb"), Lit("push"), Lit(CONFIG), WORK), "", "", shown="{cmd}", names_log=False,
                        quiet=True, note="config.txt pushed to the device's work path (no status line)."),
                Command("infer", (Lit("adb"), Lit("shell"), REMOTE), LOG, "_save_log_path", shown="{cmd}  > {log} 2>&1",
                        names_log=False, note="The predictor on the device."),
            ), note="Each precision."),
        ), note="Each batch size."),
    ), note="Each number of threads."),
), deviations=(
    Deviation(
        "lite-sed-blank-suffix",
        "config.txt is edited with `sed -i '<expression>' config.txt` (GNU sed's in-place form): the runtime "
        "device, the model file and, per run, the threads, batch size and precision are set; values are escaped "
        "for the replacement",
        "upstream runs `sed -i \" \" \"<expression>\" config.txt` (BSD sed's suffix argument): GNU sed reads the "
        "blank as its script and the expression as a file name, so on Linux no edit is made and every run pushes "
        "the same config.txt",
        (r"^config argv: upstream \+\[ \]$",),
    ),
    Deviation(
        "lite-remote-words",
        "refuses a config whose model file, runtime device, work path, inference_cmd or lists hold more than "
        "one word of the spec's characters (exit 2, before anything runs): their values reach the device's "
        "shell line",
        "upstream splices them into `adb shell '...'` as they are",
    ),
), remote=("model_name", "lite.runtime_device", "lite.work_path", "lite.inference_cmd", "lite.threads",
           "lite.batch_size", "lite.precision"))
MODELS_LITE_ARM = Layout(
    "models_lite_arm",
    "models tutorial Paddle-Lite ARM CPU config (8 lines, test_lite_arm_cpu_cpp.sh)",
    PADDLECLAS_LITE_ARM.rows,
    replace(
        PADDLECLAS_LITE_ARM.dialect,
        runners=("models_lite_arm",),
        reads=(("model_name", "value", "model_name"), ("runtime_device", "value", "lite.runtime_device"),
               ("lite_arm_work_path", "value", "lite.work_path"), ("inference_cmd", "value", "lite.inference_cmd"),
               ("num_threads_list", "value", "lite.threads"), ("batch_size_list", "value", "lite.batch_size"),
               ("precision_list", "value", "lite.precision")),
        table=TABLE,
    ),
    read_lines=8,
    detect=PADDLECLAS_LITE_ARM.detect,
)
# fmt: on
