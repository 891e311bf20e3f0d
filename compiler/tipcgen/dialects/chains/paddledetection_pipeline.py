"""PaddleDetection's test_pipeline_infer_python.sh: its 12 lines, and what it runs (a table). Its MODE is
fixed (`pipeline_infer`); it reads the filename and infer_mode lines and uses neither. For each item of
its input list (`image` or `video`) and each device item it runs the PP-Human/PP-Vehicle pipeline
script on the image file or the video file (a video with `-o MOT.enable=True`), the device set by the
device key, its output under the log directory; on the GPU (use_gpu True and the item `gpu`) with
CUDA_VISIBLE_DEVICES=0, unset after each run. Logs and status lines (with the log) in
./test_tipc/output/<model_name>/pipeline_infer/."""

from __future__ import annotations

from tipcgen.dialects.base import SEP, Dialect, F, H, Layout
from tipcgen.dialects.steps import (
    Branch,
    ChainTable,
    Command,
    Deviation,
    Export,
    Item,
    Join,
    Lit,
    Loop,
    Param,
    Pick,
    Unset,
    Val,
    When,
)

# fmt: off
MODE = "pipeline_infer"
OUTPUT = Join((Lit("--output_dir=./test_tipc/output/"), Val("model_name"), Lit(f"/{MODE}/")))
DEVICE = Param("pipe.device", "device_cmd", value=(Item("device_type"),))
# upstream's `case ${input} in image) ... ;; video) ... ;; *) echo "Undefined input mode!"; exit 1; esac`
# (a `null` item skips the case; see pipeline-input-null)
INPUT = Branch("input_kind", ((("image",), "image"), (("video",), "video"), (("null",), "null")),
               "Undefined input mode!")
GPU = Pick("pipe.use_gpu", "gpu_on", ((("True",), (), "on"),), "", default="off")


def _run(kind: str, data: str, tail: tuple, shown: str) -> When:
    words = (Val("python"), Val("pipe.script"), Param(data, "set_infer_file"), DEVICE, OUTPUT, *tail)
    return When("input_kind", (kind,), (
        Command("infer", words, "python_pipeline_{input}_{device_type}.log", "pipeline_log_path", shown=shown,
                note=f"The pipeline on the {kind} file."),
    ), note=f"An {kind} input." if kind == "image" else f"A {kind} input (multi-object tracking on).")


TABLE = ChainTable(MODE, "./test_tipc/output/{model_name}/{mode}",
                   "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
    GPU,
    Loop("pipe.input_list", "input", (
        Loop("pipe.device", "device_type", (
            When("device_type", ("gpu",), (
                When("gpu_on", ("on",), (Export("CUDA_VISIBLE_DEVICES", "0"),),
                     note="use_gpu True: upstream exports CUDA_VISIBLE_DEVICES=0."),
            ), note="A gpu item."),
            _run("image", "pipe.image_file", (), "{cmd}  > {log} 2>&1 &"),  # two blanks before `>`
            _run("video", "pipe.video_file", (Lit("-o"), Lit("MOT.enable=True")), "{cmd} > {log} 2>&1 &"),
            Unset(("CUDA_VISIBLE_DEVICES",)),
        ), note="Each device item: its device flag (on the GPU with CUDA_VISIBLE_DEVICES=0 when use_gpu is True)."),
    ), note="Each input: image or video.", branch=INPUT),
), deviations=(
    Deviation(
        "pipeline-foreground",
        "each pipeline run ends before the next starts; its status line says how it ended",
        "upstream runs each in the background (`... &`) and never waits for it: its status line is always "
        "`Run successfully` (the exit status of putting it in the background), then it prints the log as it "
        "stands (`cat`), and the runs overlap",
        (
            r"^status: infer verdict upstream 'Run successfully' vs plan 'Run failed'",
            r"^order: upstream runs it in the background, unwaited$",  # the whole-tree oracle's
        ),
    ),
    Deviation(
        "pipeline-input-null",
        "a `null` input item runs nothing",
        "upstream runs the pipeline for it with the previous item's file flag (none for the first), its log "
        "named `python_pipeline_null_<device>.log` (no corpus config lists one)",
    ),
    Deviation(
        "pipeline-input-undefined",
        "an input item other than image, video, null prints `Undefined input mode!` and runs nothing for it",
        "upstream prints it and exits 1 (no corpus config lists one)",
    ),
    Deviation(
        "pipeline-device-other",
        "a device item runs with its own device flag; CUDA_VISIBLE_DEVICES=0 only for `gpu` with use_gpu True",
        "upstream prints `Does not support hardware other than CPU and GPU Currently!` for a device item that is "
        "not `cpu` when use_gpu is not False, unless it is `gpu` with use_gpu True, and runs with the previous "
        "item's device flag (none for the first; no corpus config has one)",
    ),
))
PADDLEDETECTION_PIPELINE = Layout(
    "paddledetection_pipeline",
    "PaddleDetection pipeline config (12 lines, test_pipeline_infer_python.sh)",
    (H("pipeline_infer_python_params"), F("model_name", "model_name"), F("python", "python"),
     F("pipe.filename", lint_keys=("filename",)), SEP, F("pipe.infer_mode", "infer_mode"),
     F("pipe.input_list", "input_list"), F("pipe.use_gpu", "use_gpu"), F("pipe.script", "inference"),
     F("pipe.device", "--device"), F("pipe.image_file", "--image_file"), F("pipe.video_file", "--video_file")),
    Dialect(
        family="chain",
        title=("Python 流水线预测测试", "Python pipeline inference test"),
        runners=("paddledetection_pipeline",),
        script="test_pipeline_infer_python.sh",
        status_log="results_serving_python.log",
        reads=(  # what the script reads and uses, named as upstream's
            ("model_name", "value", "model_name"), ("python", "value", "python"),
            ("input_list", "value", "pipe.input_list"), ("use_gpu", "value", "pipe.use_gpu"),
            ("inference_py", "value", "pipe.script"), ("use_device_key", "key", "pipe.device"),
            ("use_device_list", "value", "pipe.device"), ("image_dir_key", "key", "pipe.image_file"),
            ("infer_img_dir", "value", "pipe.image_file"), ("video_dir_key", "key", "pipe.video_file"),
            ("infer_video_dir", "value", "pipe.video_file"),
        ),
        log_name_roles=("pipe.input_list", "pipe.device"),
        matrix_roles=("pipe.input_list", "pipe.device"),
        command_roles=("pipe.script",),
        table=TABLE,
    ),
    read_lines=12,
    detect=lambda sig: (
        "pipeline_infer_python_params with `input_list:` and `use_gpu:` keys (PaddleDetection "
        "test_pipeline_infer_python.sh)"
        if "pipeline_infer_python_params" in sig.headers and sig.key(6) == "input_list" and sig.key(7) == "use_gpu"
        else None
    ),
)
# fmt: on
