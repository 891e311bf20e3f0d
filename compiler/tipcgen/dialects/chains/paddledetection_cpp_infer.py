"""PaddleDetection's test_inference_cpp.sh: its 29 lines, and what it runs (a table). Upstream's
takes the config, then the Paddle Inference library's link (its build downloads it), then a GPUID;
its MODE is cpp_infer whatever it is given. It builds the C++ demo in deploy/cpp first (wget, tar,
cmake, make: no status line, its exit codes unread), which ours does not (`cpp-no-demo-build`); then
exports CUDA_VISIBLE_DEVICES=GPUID when one is given, and for each item of its infer_mode list
exports the trained weights with that item's export command (as its paddle2onnx chain, not for
`null`) and runs the built demo: per use_gpu item, on the CPU (`False`/`cpu`) each mkldnn x threads
x batch size, mkldnn off skipped for a model its infer_quant item (the one at the infer_mode's
position) says is quantized; on the GPU (`True`/`gpu`) each run mode x batch size, `trt_int8` only
for a quantized model, any other but `paddle` only for another; any other use_gpu item only
echoes. Logs in ./test_tipc/output/<model_name>/cpp_infer/, status lines in results_cpp.log. Its
func_parser_value keeps a value whole; its use_tensorrt line is read and unused."""

from __future__ import annotations

from tipcgen.dialects.base import SEP, Dialect, F, H, Layout
from tipcgen.dialects.chains.paddledetection_paddle2onnx import EXPORTS, UNDEFINED
from tipcgen.dialects.chains.ptq import DEVICE
from tipcgen.dialects.steps import (
    Case,
    ChainTable,
    Command,
    Deviation,
    Item,
    Join,
    Key,
    Lit,
    Loop,
    Param,
    Skip,
    Val,
    When,
)

# fmt: off
CASES = tuple((item, role.replace("p2o.", "cpp.")) for item, role in EXPORTS)
EXPORT = (Val("python"), Case("infer_mode", "run_export", CASES, "Undefined infer_mode!"),
          Param("cpp.export.weights", "set_export_weight"), Param("cpp.export.filename", value="model_name"),
          Param("cpp.export.save_dir", "set_save_export_dir"),
          Lit(""))  # its command ends in a blank (the status line shows it)
DIR = (Val("cpp.export.save_dir"), Lit("/"), Val("model_name"))  # where the export put the model
TAIL = (Param("cpp.infer.model", "set_model_dir", value=DIR),
        Param("cpp.infer.batch_size", "set_batchsize", value=(Item("batch_size"),)),
        Param("cpp.infer.data", "set_infer_data"), Param("cpp.infer.benchmark", "set_benchmark"),
        Param("cpp.infer.extra", "set_infer_params1"))
USE_GPU = Join((Key("cpp.infer.use_gpu"), Lit("="), Item("use_gpu")))
CPU = (Val("cpp.infer.command"), USE_GPU, Join((Key("cpp.infer.mkldnn"), Lit("="), Item("use_mkldnn"))),
       Param("cpp.infer.threads", "set_cpu_threads", value=(Item("threads"),)), *TAIL)
GPU = (Val("cpp.infer.command"), USE_GPU, Param("cpp.infer.precision", "set_precision", value=(Item("precision"),)),
       *TAIL)
NOT_PADDLE = ("precision", "paddle", False)  # upstream's `[[ ${precision} != "paddle" ]]` around its skips
SHOWN = "{cmd} > {log} 2>&1 "  # its status line shows the redirection (and a blank)
KV = (("cpp.export.save_dir", "save_export"), ("cpp.export.weights", "export_weight"))
LISTS = (("cpp.infer.use_gpu", "use_gpu"), ("cpp.infer.mkldnn", "use_mkldnn"), ("cpp.infer.threads", "cpu_threads"),
         ("cpp.infer.batch_size", "batch_size"), ("cpp.infer.precision", "precision"))
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"), ("python", "value", "python"),
    ("filename_key", "key", "cpp.export.filename"),
    *((f"{var}_{kind}", kind, role) for role, var in KV for kind in ("key", "value")),
    ("norm_export", "value", "cpp.export.norm"), ("pact_export", "value", "cpp.export.quant"),
    ("fpgm_export", "value", "cpp.export.fpgm"), ("distill_export", "value", "cpp.export.distill"),
    ("kl_quant_export", "value", "cpp.export.kl_quant"),
    ("cpp_infer_mode_list", "value", "cpp.infer_modes"), ("cpp_infer_is_quant_list", "value", "cpp.infer_quant"),
    ("inference_cmd", "value", "cpp.infer.command"),
    *((f"cpp_{var}_{name}", kind, role) for role, var in LISTS for kind, name in (("key", "key"), ("value", "list"))),
    ("cpp_infer_model_key", "key", "cpp.infer.model"),
    ("cpp_image_dir_key", "key", "cpp.infer.data"), ("cpp_infer_img_dir", "value", "cpp.infer.data"),
    ("cpp_benchmark_key", "key", "cpp.infer.benchmark"), ("cpp_benchmark_value", "value", "cpp.infer.benchmark"),
    ("cpp_infer_key1", "key", "cpp.infer.extra"), ("cpp_infer_value1", "value", "cpp.infer.extra"),
)
NO_BUILD = Deviation(
    "cpp-no-demo-build",
    "does not build the C++ demo: it runs the `inference` binary built before the run "
    "(deploy/cpp/build/main); its second argument, the Paddle Inference library's link, is read and unused",
    "building is preparation, not a test step: upstream rebuilds the demo on every run (in deploy/cpp: "
    "`wget` of the library its second argument links, unless PADDLE_INFER_DIR is set, `tar`, `rm -rf build`, "
    "cmake, `make -j8`), without a status line or a look at their exit codes",
    (r"^build: upstream builds the demo first",),
)
TABLE = ChainTable("cpp_infer", "./test_tipc/output/{model_name}/{mode}",
                   "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
    Loop("cpp.infer_modes", "infer_mode", (
        Command("export", EXPORT, "export.log", "export_log_path", shown="{cmd}", unless_null="infer_mode",
                null_or_empty=True, note="The trained weights exported by the infer_mode's export command."),
        Loop("cpp.infer.use_gpu", "use_gpu", (
            When("device", ("cpu",), (
                Loop("cpp.infer.mkldnn", "use_mkldnn", (
                    Skip((("use_mkldnn", "False", True), ("is_quant", "True", True))),
                    Loop("cpp.infer.threads", "threads", (
                        Loop("cpp.infer.batch_size", "batch_size", (
                            Command("infer", CPU, "cpp_infer_cpu_usemkldnn_{use_mkldnn}_threads_{threads}_mode_paddle"
                                    "_batchsize_{batch_size}.log", "_save_log_path", shown=SHOWN,
                                    note="The C++ demo on the CPU."),
                        ), note="Each batch size."),
                    ), note="Each number of CPU threads."),
                ), note="Each mkldnn setting (mkldnn off skipped for a quantized model)."),
            ), note="On the CPU: each mkldnn x threads x batch size."),
            When("device", ("gpu",), (
                Loop("cpp.infer.precision", "precision", (
                    Skip((NOT_PADDLE, ("is_quant", "False", True), ("precision", "trt_int8", True))),
                    Skip((NOT_PADDLE, ("is_quant", "True", True), ("precision", "trt_int8", False))),
                    Loop("cpp.infer.batch_size", "batch_size", (
                        Command("infer", GPU, "cpp_infer_gpu_mode_{precision}_batchsize_{batch_size}.log",
                                "_save_log_path", shown=SHOWN, note="The C++ demo on the GPU."),
                    ), note="Each batch size."),
                ), note="Each run mode: paddle always, trt_int8 only for a quantized model, another only for another."),
            ), note="On the GPU: each run mode x batch size."),
        ), note="Each use_gpu: False or cpu on the CPU, True or gpu on the GPU (upstream only echoes for another).",
            branch=DEVICE),
    ), note="Each infer_mode: its export (none for `null`), then the C++ demo's runs, quantized or not as\n"
            "the infer_quant item at its position says.", paired=("cpp.infer_quant", "is_quant")),
), deviations=(NO_BUILD, UNDEFINED), gpuid_env=True)
PADDLEDETECTION_CPP_INFER = Layout(
    "paddledetection_cpp_infer",
    "PaddleDetection C++ inference config (29 lines, test_inference_cpp.sh)",
    (H("cpp_infer_params"), F("model_name", "model_name"), F("python", "python"),
     F("cpp.export.filename", lint_keys=("filename",)), SEP,
     F("cpp.export.save_dir", "--output_dir"), F("cpp.export.weights", "weights"),
     F("cpp.export.norm", "norm_export"), F("cpp.export.quant", "quant_export"), F("cpp.export.fpgm", "fpgm_export"),
     F("cpp.export.distill", "distill_export"), F("cpp.export.extra", lint_keys=("export1",)),
     F("cpp.export.extra2", lint_keys=("export2",)), F("cpp.export.kl_quant", "kl_quant_export"), SEP,
     F("cpp.opencv_dir", "opencv_dir"), F("cpp.infer_modes", "infer_mode"), F("cpp.infer_quant", "infer_quant"),
     F("cpp.infer.command", "inference"), F("cpp.infer.use_gpu", "--device"), F("cpp.infer.mkldnn", "--use_mkldnn"),
     F("cpp.infer.threads", "--cpu_threads"), F("cpp.infer.batch_size", "--batch_size"),
     F("cpp.infer.tensorrt", "--use_tensorrt"), F("cpp.infer.precision", "--run_mode"),
     F("cpp.infer.model", lint_keys=("--model_dir", "--model_dir_keypoint")),
     F("cpp.infer.data", lint_keys=("--image_dir",)), F("cpp.infer.benchmark", "--run_benchmark"),
     F("cpp.infer.extra", lint_keys=("null",))),
    Dialect(
        family="chain",
        title=("C++ 预测测试", "C++ inference test"),
        runners=("paddledetection_cpp_infer",),
        values_to_colon=False,
        script="test_inference_cpp.sh",
        status_log="results_cpp.log",
        gpuid_arg=True,
        second_arg=("PADDLE_INFER_LINK", "the Paddle Inference library upstream's build downloads; read and unused "
                                         "(this script does not build the demo: deploy/cpp/build/main must exist)"),
        family_sections=True,
        reads=READS,
        command_roles=("cpp.infer.command", *(role for _item, role in CASES)),
        log_name_roles=("cpp.infer.mkldnn", "cpp.infer.threads", "cpp.infer.batch_size", "cpp.infer.precision"),
        matrix_roles=("cpp.infer_modes", "cpp.infer_quant", *(role for role, _var in LISTS)),
        table=TABLE,
    ),
    read_lines=29,
    detect=lambda sig: (
        "cpp_infer_params with `norm_export:` and `infer_mode:` keys (PaddleDetection test_inference_cpp.sh)"
        if "cpp_infer_params" in sig.headers and sig.key(7) == "norm_export" and sig.key(16) == "infer_mode"
        else None
    ),
)
# fmt: on
