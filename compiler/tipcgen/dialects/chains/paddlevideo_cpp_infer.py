"""PaddleVideo's test_inference_cpp.sh: its 18 lines, and what it runs (a table). Upstream's takes
the config and MODE (its log directory), then reads its second argument again as a GPUID: it
exports CUDA_VISIBLE_DEVICES=<MODE> (`cpp-mode-not-gpuid`). It builds OpenCV (for `use_opencv`
True), downloads the Paddle Inference library and builds the video demo in deploy/cpp_infer first
(no status line, its exit codes unread), which ours does not (`cpp-no-demo-build`). Then, for each
inference model of its infer_model list (its infer_quant item at the same position says whether it
is quantized), per use_gpu item: on the CPU (`False`/`cpu`) each mkldnn x threads x batch size
(mkldnn off skipped for a quantized model; the log says precision fp32: upstream's int8 assignment
is misspelt), on the GPU (`True`/`gpu`) each TensorRT x precision x batch size (int8 only for a
quantized model and with TensorRT, fp16 only with TensorRT, a quantized model only with TensorRT
and not int8); any other use_gpu item only echoes. Logs in ./test_tipc/output/<model_name>/<MODE>/,
status lines in results_cpp.log without a log (its status_check gets four arguments)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.chains.paddledetection_cpp_infer import NO_BUILD
from tipcgen.dialects.chains.ptq import DEVICE
from tipcgen.dialects.steps import ChainTable, Command, Deviation, Item, Join, Key, Lit, Loop, Param, Skip, Val, When

# fmt: off
HEAD = (Param("cpp.infer.model", "set_model_dir", value=(Item("infer_model"),)),
        Param("cpp.infer.batch_size", "set_batchsize", value=(Item("batch_size"),)),
        Param("cpp.infer.data", "set_infer_data"), Param("cpp.infer.benchmark", "set_benchmark"),
        Param("cpp.infer.extra", "set_infer_params1"), Param("cpp.infer.extra2", "set_infer_params2"),
        Param("cpp.infer.extra3", "set_infer_params3"))
USE_GPU = Join((Key("cpp.infer.use_gpu"), Lit("="), Item("use_gpu")))
CPU = (Val("cpp.infer.command"), USE_GPU, Join((Key("cpp.infer.mkldnn"), Lit("="), Item("use_mkldnn"))),
       Param("cpp.infer.threads", "set_cpu_threads", value=(Item("threads"),)), *HEAD)
GPU = (Val("cpp.infer.command"), USE_GPU, Param("cpp.infer.tensorrt", "set_tensorrt", value=(Item("use_trt"),)),
       Param("cpp.infer.precision", "set_precision", value=(Item("precision"),)), *HEAD)
SHOWN = "{cmd} > {log} 2>&1 "  # its status line shows the redirection (and a blank)
LISTS = (("cpp.infer.use_gpu", "use_gpu"), ("cpp.infer.mkldnn", "use_mkldnn"), ("cpp.infer.threads", "cpu_threads"),
         ("cpp.infer.batch_size", "batch_size"), ("cpp.infer.tensorrt", "use_trt"),
         ("cpp.infer.precision", "precision"))
EXTRA = (("cpp.infer.extra", "1"), ("cpp.infer.extra2", "2"), ("cpp.infer.extra3", "3"))
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"),
    ("cpp_infer_model_dir_list", "value", "cpp.infer_models"), ("cpp_infer_is_quant", "value", "cpp.infer_quant"),
    ("inference_cmd", "value", "cpp.infer.command"),
    *((f"cpp_{var}_{name}", kind, role) for role, var in LISTS for kind, name in (("key", "key"), ("value", "list"))),
    ("cpp_infer_model_key", "key", "cpp.infer.model"),
    ("cpp_image_dir_key", "key", "cpp.infer.data"), ("cpp_infer_img_dir", "value", "cpp.infer.data"),
    ("cpp_benchmark_key", "key", "cpp.infer.benchmark"), ("cpp_benchmark_value", "value", "cpp.infer.benchmark"),
    *((f"cpp_infer_{kind}{n}", kind, role) for role, n in EXTRA for kind in ("key", "value")),
)
BUILD = replace(
    NO_BUILD,
    what="does not build the C++ demo: it runs the `inference` binary built before the run "
    "(deploy/cpp_infer/build/ppvideo); its use_opencv line is read and unused",
    why="building is preparation, not a test step: upstream builds OpenCV first when use_opencv is True (`wget`, "
    "`tar`, cmake, make), downloads the Paddle Inference library (`wget`, `tar`), then rebuilds the demo in "
    "deploy/cpp_infer (`rm -rf build`, cmake, `make -j`), without a status line or a look at their exit codes",
)
MODE_NOT_GPUID = Deviation(
    "cpp-mode-not-gpuid",
    "exports CUDA_VISIBLE_DEVICES=GPUID only for a GPUID given third (CONFIG [MODE] [GPUID]); otherwise its "
    "commands see the caller's",
    "upstream reads its GPUID from its second argument, which is its MODE: it exports "
    "CUDA_VISIBLE_DEVICES=<MODE> (`cpp_infer`), a value naming no device, for every command",
    (r"^infer: CUDA_VISIBLE_DEVICES upstream \S+ vs plan None$",),
)
TABLE = ChainTable("cpp_infer", "./test_tipc/output/{model_name}/{mode}",
                   "{verdict} with command - {model} - {command} - {log} ", (  # its status_check, given no log
    Loop("cpp.infer_models", "infer_model", (
        Loop("cpp.infer.use_gpu", "use_gpu", (
            When("device", ("cpu",), (
                Loop("cpp.infer.mkldnn", "use_mkldnn", (
                    Skip((("use_mkldnn", "False", True), ("is_quant", "True", True))),
                    Loop("cpp.infer.threads", "threads", (
                        Loop("cpp.infer.batch_size", "batch_size", (
                            Command("infer", CPU, "cpp_infer_cpu_usemkldnn_{use_mkldnn}_threads_{threads}"
                                    "_precision_fp32_batchsize_{batch_size}.log", "_save_log_path", shown=SHOWN,
                                    names_log=False, note="The C++ demo on the CPU."),
                        ), note="Each batch size."),
                    ), note="Each number of CPU threads."),
                ), note="Each mkldnn setting (mkldnn off skipped for a quantized model)."),
            ), note="On the CPU: each mkldnn x threads x batch size."),
            When("device", ("gpu",), (
                Loop("cpp.infer.tensorrt", "use_trt", (
                    Loop("cpp.infer.precision", "precision", (
                        Skip((("is_quant", "False", True), ("precision", "*int8*", True))),
                        Skip((("precision", "*fp16*", True), ("use_trt", "False", True))),
                        Skip((("precision", "*int8*", True), ("use_trt", "False", True))),
                        Skip((("use_trt", "False", True), ("is_quant", "True", True))),
                        Skip((("precision", "*int8*", True), ("is_quant", "True", True))),
                        Loop("cpp.infer.batch_size", "batch_size", (
                            Command("infer", GPU, "cpp_infer_gpu_usetrt_{use_trt}_precision_{precision}"
                                    "_batchsize_{batch_size}.log", "_save_log_path", shown=SHOWN,
                                    names_log=False, note="The C++ demo on the GPU."),
                        ), note="Each batch size."),
                    ), note="Each precision: int8 only for a quantized model with TensorRT, fp16 only with\n"
                            "TensorRT, a quantized model only with TensorRT and not in int8."),
                ), note="Each TensorRT setting."),
            ), note="On the GPU: each TensorRT x precision x batch size."),
        ), note="Each use_gpu: False or cpu on the CPU, True or gpu on the GPU (upstream only echoes for another).",
            branch=DEVICE),
    ), note="Each inference model, quantized or not as the infer_quant item at its position says.",
        paired=("cpp.infer_quant", "is_quant")),
), deviations=(BUILD, MODE_NOT_GPUID), gpuid_env=True)
PADDLEVIDEO_CPP_INFER = Layout(
    "paddlevideo_cpp_infer",
    "PaddleVideo C++ inference config (18 lines, test_inference_cpp.sh)",
    (H("cpp_infer_params"), F("model_name", "model_name"), F("cpp.use_opencv", "use_opencv"),
     F("cpp.infer_models", "infer_model"), F("cpp.infer_quant", "infer_quant"), F("cpp.infer.command", "inference"),
     F("cpp.infer.use_gpu", "--use_gpu"), F("cpp.infer.mkldnn", "--enable_mkldnn"),
     F("cpp.infer.threads", "--cpu_threads"), F("cpp.infer.batch_size", "--rec_batch_num"),
     F("cpp.infer.tensorrt", "--use_tensorrt"), F("cpp.infer.precision", "--precision"),
     F("cpp.infer.model", lint_keys=("--rec_model_dir",)), F("cpp.infer.data", lint_keys=("--video_dir",)),
     F("cpp.infer.extra", lint_keys=("--inference_model_name",)), F("cpp.infer.benchmark", "--benchmark"),
     F("cpp.infer.extra2", lint_keys=("--char_list_file",)), F("cpp.infer.extra3", lint_keys=("--num_seg",))),
    Dialect(
        family="chain",
        title=("C++ 预测测试", "C++ inference test"),
        runners=("paddlevideo_cpp_infer",),
        values_to_colon=True,
        script="test_inference_cpp.sh",
        status_log="results_cpp.log",
        gpuid_arg=True,
        family_sections=True,
        reads=READS,
        command_roles=("cpp.infer.command",),
        log_name_roles=("cpp.infer.mkldnn", "cpp.infer.threads", "cpp.infer.batch_size", "cpp.infer.tensorrt",
                        "cpp.infer.precision"),
        matrix_roles=("cpp.infer_models", "cpp.infer_quant", *(role for role, _var in LISTS)),
        table=TABLE,
    ),
    read_lines=18,
    detect=lambda sig: (
        "cpp_infer_params with `use_opencv:` and `--rec_model_dir:` keys (PaddleVideo test_inference_cpp.sh)"
        if "cpp_infer_params" in sig.headers and sig.key(2) == "use_opencv" and sig.key(12) == "--rec_model_dir"
        else None
    ),
)
# fmt: on
