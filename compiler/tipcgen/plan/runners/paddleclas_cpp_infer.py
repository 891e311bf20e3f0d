"""PaddleClas's test_inference_cpp.sh as a Plan: for each inference model of the config and each
combination of its `|`-lists, write the C++ demo's yaml (`generate_yaml_cmd`; for PP-ShiTu also
`transform_index_cmd`), then run the demo (`inference_cmd`) with its output to a log named after
the combination. CPU runs loop over mkldnn x threads x batch size, GPU runs over TensorRT x
precision x batch size, with upstream's skips for quantised models. Every step sees
CUDA_VISIBLE_DEVICES=GPUID (the script's third argument, default 0). Logs and the status log
(`results_cpp.log`) under `$(pwd)/test_tipc/output/<model_name>/<MODE>/`.

Not steps: the build of the demo (see the `no-demo-build` deviation). The yaml steps write no
status line, as upstream's (SILENT_KINDS).

Upstream quirks kept because they change no step: its GPU skips leave int8 no run for a model
flagged either way (infer_quant False skips it, True skips it too; only a model without a flag
runs it, with TensorRT); the CPU branch's int8
assignment is misspelt and unreachable, so CPU runs are fp32; the config's `benchmark` line is
read and ignored (`--benchmark True`); `set CUDA_VISIBLE_DEVICES` only overwrites the positional
parameters after they were read.
"""

from __future__ import annotations

from tipcgen.dialects.steps import refuses_modes_but
from tipcgen.errors import UsageError
from tipcgen.plan.builder import Builder
from tipcgen.plan.runner import COMMON_DEVIATIONS, Deviation
from tipcgen.script.shellwords import ifs_split

MODE = "cpp_infer"
MODES = (MODE,)
TEMPLATE = "runner_paddleclas_cpp_infer.sh.j2"
STATUS_FORMAT = "{verdict} with command - {model} - {command} - {log} ! "  # PaddleClas's status_check
GPU_ENTRIES_BY_LENGTH = False  # no gpu_list in this chain
CLASSIC = None

TYPES = ("cls", "shitu")

DEVIATIONS = (
    *COMMON_DEVIATIONS,
    Deviation(
        "no-demo-build",
        "does not build the C++ demo: it runs the `inference_cmd` binary built before the run "
        "(deploy/cpp/build/clas_system, deploy/cpp_shitu/build/pp_shitu)",
        "building is preparation, not a test step (as PaddleDetection's op build): upstream "
        "rebuilds the demo on every run (`rm -rf build`, cmake, make), and for PP-ShiTu downloads "
        "and bootstraps CMake 3.22, `apt-get install`s OpenBLAS and clones and builds faiss, all "
        "without a status line or a look at their exit codes; `-DTENSORRT_DIR` is a variable the "
        "script never sets",
        (r"^build: upstream builds the demo first",),
    ),
    Deviation(
        "cpp-yaml-failure-counts",
        "a failed yaml step (`generate_yaml_cmd`, `transform_index_cmd`) makes the script exit 1 "
        "and says so on stderr (it still writes no status line, as upstream)",
        "upstream ignores their exit codes: the demo then reads the previous run's yaml, and its "
        "`Run successfully` reports a combination that never ran",
    ),
    Deviation(
        "cpp-model-dir-per-run",
        "each inference model of a `|`-list of `cls_inference_model_dir` goes to the yaml of its own "
        "runs (`--cls_model_dir <that model>`)",
        "upstream loops over the models but passes the whole list each time (its `|` read as a "
        "space: one more argument the yaml writer refuses); no corpus config has more than one. "
        "Their logs share names, as upstream's: a later model's run overwrites an earlier one's",
        (r"^prep argv: upstream \+\[[^\]]*\]$",),
    ),
    Deviation(
        "cpp-unknown-type-refused",
        "a `cpp_infer_type` other than cls or shitu is refused (exit 2, nothing run or written)",
        "upstream says `Only support cls and shitu` and exits 0, a passing run that tested nothing",
    ),
    Deviation(
        "cpp-mode-checked",
        "MODE is `cpp_infer` (its default); another is refused",
        "upstream uses MODE only in the log directory's name: a mistyped MODE (or none) passes "
        "with its logs somewhere no one looks",
        (refuses_modes_but("cpp_infer", defaulted=True),),
    ),
)


def _cpu_runs(lists: dict, use_gpu: str, quant: str) -> list[tuple[str, str]]:
    """(generate_yaml flags, log name) of the CPU runs of one use_gpu item (quant: the model's
    infer_quant flag): mkldnn x threads x batch size, mkldnn off skipped for a quantised model."""
    out = []
    for mkldnn in lists["mkldnn"]:
        if mkldnn == "False" and quant == "True":
            continue
        for threads in lists["threads"]:
            for batch in lists["batch_size"]:
                # upstream's int8 branch here sets a misspelt variable and cannot be reached: fp32
                flags = (
                    f"--batch_size {batch} --mkldnn {mkldnn} --gpu {use_gpu} --cpu_thread {threads} "
                    "--tensorrt False --precision fp32"
                )
                out.append(
                    (flags, f"cpp_infer_cpu_usemkldnn_{mkldnn}_threads_{threads}_precision_fp32_batchsize_{batch}.log")
                )
    return out


def _gpu_runs(lists: dict, use_gpu: str, quant: str) -> list[tuple[str, str]]:
    """The GPU runs: TensorRT x precision x batch size, with upstream's three skips (int8 only for
    a quantised model, fp16/int8 only with TensorRT, a quantised model only with TensorRT, not int8)."""
    out = []
    for trt in lists["tensorrt"]:
        for precision in lists["precision"]:
            if quant == "False" and "int8" in precision:
                continue
            if ("fp16" in precision or "int8" in precision) and trt == "False":
                continue
            if (trt == "False" or "int8" in precision) and quant == "True":
                continue
            for batch in lists["batch_size"]:
                flags = (
                    f"--batch_size {batch} --mkldnn False --gpu {use_gpu} --cpu_thread 1 "
                    f"--tensorrt {trt} --precision {precision}"
                )
                out.append((flags, f"cpp_infer_gpu_usetrt_{trt}_precision_{precision}_batchsize_{batch}.log"))
    return out


def _runs(b: Builder, quant: str) -> list[tuple[str, str]]:
    """(generate_yaml flags, log name) of each run of one model, in upstream's order."""
    lists = {r: ifs_split(b.v.value_to_colon(f"cpp.infer.{r}"), "|") for r in
             ("use_gpu", "mkldnn", "threads", "batch_size", "tensorrt", "precision")}  # fmt: skip
    out = []
    for use_gpu in lists["use_gpu"]:
        if use_gpu in ("False", "cpu"):
            out += _cpu_runs(lists, use_gpu, quant)
        elif use_gpu in ("True", "gpu"):
            out += _gpu_runs(lists, use_gpu, quant)
        # any other item: upstream prints that it supports CPU and GPU only, and runs nothing
    return out


def plan(b: Builder) -> None:
    v = b.v
    kind = v.value_to_colon("cpp.type")
    if kind not in TYPES:
        raise UsageError(f"{b.source}: cpp_infer_type {kind!r}: test_inference_cpp.sh runs cls or shitu only")
    b.log_dir = f"{b.root or '.'}/test_tipc/output/{v.value_to_colon('model_name')}/{b.mode}"
    b.status_log = f"{b.log_dir}/{v.layout.dialect.status_log}"
    gpuid = b.gpuid or "0"
    b.cvd = gpuid  # upstream exports CUDA_VISIBLE_DEVICES=${GPUID} before anything
    generate = v.value_to_colon("cpp.generate_yaml")
    transform = v.value_to_colon("cpp.transform_index")
    data = v.value_to_colon("cpp.infer.data")
    det = f" --det_model_dir {v.value_to_colon('cpp.det_model_dir')}" if kind == "shitu" else ""
    infer = v.value_to_colon("cpp.infer.command")
    quants = ifs_split(v.value_to_colon("cpp.quant"), "|")
    for n, model in enumerate(ifs_split(v.value_to_colon("cpp.model_dir"), "|")):
        quant = quants[n] if n < len(quants) else ""
        for flags, name in _runs(b, quant):
            yaml = (
                f"{generate} --type {kind} {flags} --data_dir {data} --benchmark True "
                f"--cls_model_dir {model}{det} --gpu_id {gpuid}"
            )
            b.add("prep", yaml, None)
            if kind == "shitu" and transform.strip():
                b.add("prep", transform, None)
            log = f"{b.log_dir}/{name}"
            b.add("infer", infer, log, shown=f"{infer} > {log} 2>&1", status_path=log)
