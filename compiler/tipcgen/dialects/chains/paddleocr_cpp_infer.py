"""PaddleOCR's test_inference_cpp.sh: its 20 lines, and what it runs (a table). Upstream's takes the
config, a GPUID (its second argument) and the Paddle Inference library's link (its build downloads
it). It builds OpenCV (for `use_opencv` True), downloads the library and builds the OCR demo in
deploy/cpp_infer first (no status line, its exit codes unread), which ours does not
(`cpp-no-demo-build`); it exports CUDA_VISIBLE_DEVICES=GPUID (0 when none is given). Then, for each
inference model of its infer_model list (its infer_quant item at the same position says whether it
is quantized), per use_gpu item: on the CPU (`False`/`cpu`) each mkldnn x threads x batch size
(mkldnn off skipped for a quantized model; the log says precision fp32: upstream's int8 assignment
is misspelt), on the GPU (`True`/`gpu`) each TensorRT x precision x batch size (int8 only for a
quantized model and with TensorRT, fp16 only with TensorRT, a quantized model only with TensorRT
and not int8); any other use_gpu item only echoes. Every run passes the det/rec/cls/use_angle_cls
lines (which stages of the OCR system the demo runs) and the extra line (a system's recognizer
model) under their own keys. Logs and status lines (with the log) in
./test_tipc/output/<model_name>/cpp_infer/, whatever the MODE."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import Dialect, F, H, Layout
from tipcgen.dialects.chains.paddledetection_cpp_infer import NO_BUILD
from tipcgen.dialects.chains.ptq import DEVICE
from tipcgen.dialects.steps import ChainTable, Command, Deviation, Item, Join, Key, Lit, Loop, Param, Skip, Val, When

# fmt: off
STAGES = (("cpp.infer.det", "det"), ("cpp.infer.rec", "rec"), ("cpp.infer.cls", "cls"),
          ("cpp.infer.angle_cls", "use_angle_cls"))
TAIL = (Param("cpp.infer.model", "set_model_dir", value=(Item("infer_model"),)),
        Param("cpp.infer.batch_size", "set_batchsize", value=(Item("batch_size"),)),
        Param("cpp.infer.data", "set_infer_data"), Param("cpp.infer.benchmark", "set_benchmark"),
        *(Param(role, f"set_{var}") for role, var in STAGES), Param("cpp.infer.extra", "set_infer_params1"))
USE_GPU = Join((Key("cpp.infer.use_gpu"), Lit("="), Item("use_gpu")))
CPU = (Val("cpp.infer.command"), USE_GPU, Param("cpp.infer.mkldnn", "set_mkldnn", value=(Item("use_mkldnn"),)),
       Param("cpp.infer.threads", "set_cpu_threads", value=(Item("threads"),)), *TAIL)
GPU = (Val("cpp.infer.command"), USE_GPU, Param("cpp.infer.tensorrt", "set_tensorrt", value=(Item("use_trt"),)),
       Param("cpp.infer.precision", "set_precision", value=(Item("precision"),)), *TAIL)
SHOWN = "{cmd} > {log} 2>&1 "  # its status line shows the redirection (and a blank)
LISTS = (("cpp.infer.use_gpu", "use_gpu"), ("cpp.infer.mkldnn", "use_mkldnn"), ("cpp.infer.threads", "cpu_threads"),
         ("cpp.infer.batch_size", "batch_size"), ("cpp.infer.tensorrt", "use_trt"),
         ("cpp.infer.precision", "precision"))
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"),
    ("cpp_infer_model_dir_list", "value", "cpp.infer_models"), ("cpp_infer_is_quant", "value", "cpp.infer_quant"),
    ("inference_cmd", "value", "cpp.infer.command"),
    *((f"cpp_{var}_{name}", kind, role) for role, var in LISTS for kind, name in (("key", "key"), ("value", "list"))),
    ("cpp_infer_model_key", "key", "cpp.infer.model"),
    ("cpp_image_dir_key", "key", "cpp.infer.data"), ("cpp_infer_img_dir", "value", "cpp.infer.data"),
    ("cpp_infer_key1", "key", "cpp.infer.extra"), ("cpp_infer_value1", "value", "cpp.infer.extra"),
    ("cpp_benchmark_key", "key", "cpp.infer.benchmark"), ("cpp_benchmark_value", "value", "cpp.infer.benchmark"),
    *((f"cpp_{var}_{kind}", kind, role) for role, var in STAGES for kind in ("key", "value")),
)
BUILD = replace(
    NO_BUILD,
    what="does not build the C++ demo: it runs the `inference` binary built before the run "
    "(deploy/cpp_infer/build/ppocr); its use_opencv line is read and unused, and so is a Paddle Inference "
    "library's link",
    why="building is preparation, not a test step: upstream builds OpenCV first when use_opencv is True and "
    "deploy/cpp_infer has no checked copy (`wget`, `tar`, cmake, make), downloads the Paddle Inference library "
    "unless deploy/cpp_infer/paddle_inference exists (`wget` of the link its third argument gives, `tar`), then "
    "rebuilds the demo (`rm -rf build`, cmake, `make -j`), without a status line or a look at their exit codes",
)
GPUID_SECOND = Deviation(
    "cpp-gpuid-third",
    "takes CONFIG [MODE] [GPUID] as every generated chain script: exports CUDA_VISIBLE_DEVICES=GPUID, 0 when "
    "no GPUID is given (as upstream), for every command; a GPU id given second is refused (exit 2, naming the "
    "third argument)",
    "upstream takes CONFIG GPUID [PADDLE_INFER_LINK]: its second argument is the GPUID, so a MODE given there "
    "(`cpp_infer`, as the other chains' scripts take it) is exported as CUDA_VISIBLE_DEVICES, naming no device",
    (r"^infer: CUDA_VISIBLE_DEVICES upstream \S+ vs plan \S+$",),
)
TABLE = ChainTable("cpp_infer", "./test_tipc/output/{model_name}/cpp_infer",
                   "{verdict} with command - {model} - {command} - {log} ", (  # its status_check
    Loop("cpp.infer_models", "infer_model", (
        Loop("cpp.infer.use_gpu", "use_gpu", (
            When("device", ("cpu",), (
                Loop("cpp.infer.mkldnn", "use_mkldnn", (
                    Skip((("use_mkldnn", "False", True), ("is_quant", "True", True))),
                    Loop("cpp.infer.threads", "threads", (
                        Loop("cpp.infer.batch_size", "batch_size", (
                            Command("infer", CPU, "cpp_infer_cpu_usemkldnn_{use_mkldnn}_threads_{threads}"
                                    "_precision_fp32_batchsize_{batch_size}.log", "_save_log_path", shown=SHOWN,
                                    note="The C++ demo on the CPU."),
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
                                    note="The C++ demo on the GPU."),
                        ), note="Each batch size."),
                    ), note="Each precision: int8 only for a quantized model with TensorRT, fp16 only with\n"
                            "TensorRT, a quantized model only with TensorRT and not in int8."),
                ), note="Each TensorRT setting."),
            ), note="On the GPU: each TensorRT x precision x batch size."),
        ), note="Each use_gpu: False or cpu on the CPU, True or gpu on the GPU (upstream only echoes for another).",
            branch=DEVICE),
    ), note="Each inference model, quantized or not as the infer_quant item at its position says.",
        paired=("cpp.infer_quant", "is_quant")),
), deviations=(BUILD, GPUID_SECOND), gpuid_env=True, gpuid_default="0")
PADDLEOCR_CPP_INFER = Layout(
    "paddleocr_cpp_infer",
    "PaddleOCR C++ inference config (20 lines, test_inference_cpp.sh)",
    (H("cpp_infer_params"), F("model_name", "model_name"), F("cpp.use_opencv", "use_opencv"),
     F("cpp.infer_models", "infer_model"), F("cpp.infer_quant", "infer_quant"), F("cpp.infer.command", "inference"),
     F("cpp.infer.use_gpu", "--use_gpu"), F("cpp.infer.mkldnn", "--enable_mkldnn"),
     F("cpp.infer.threads", "--cpu_threads"), F("cpp.infer.batch_size", "--rec_batch_num"),
     F("cpp.infer.tensorrt", "--use_tensorrt"), F("cpp.infer.precision", "--precision"),
     F("cpp.infer.model", lint_keys=("--det_model_dir", "--rec_model_dir", "--table_model_dir")),
     F("cpp.infer.data", lint_keys=("--image_dir",)), F("cpp.infer.extra", lint_keys=("--rec_model_dir", "null")),
     F("cpp.infer.benchmark", "--benchmark"), F("cpp.infer.det", "--det"), F("cpp.infer.rec", "--rec"),
     F("cpp.infer.cls", "--cls"), F("cpp.infer.angle_cls", "--use_angle_cls")),
    Dialect(
        family="chain",
        title=("C++ 预测测试", "C++ inference test"),
        runners=("paddleocr_cpp_infer",),
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
    read_lines=20,
    detect=lambda sig: (
        "cpp_infer_params with `use_opencv:` and `--det:`, `--use_angle_cls:` keys (PaddleOCR test_inference_cpp.sh)"
        if "cpp_infer_params" in sig.headers and sig.key(2) == "use_opencv" and sig.key(16) == "--det"
        and sig.key(19) == "--use_angle_cls"
        else None
    ),
)
# fmt: on
