"""PaddleOCR's test_inference_python.sh: its 20 lines (a header named for the model), and what it
runs in whole_infer (a table): for each inference model of its `infer_model` list (the item of
`infer_quant` at its position saying whether it is quantized), per use_gpu item the Python
inference, on the CPU each mkldnn x threads x batch size x precision, on the GPU each TensorRT x
precision x batch size, leaving out the combinations upstream skips; logs and status lines in
./test_tipc/output/<model_name>/whole_infer/. GPUID, when given, is CUDA_VISIBLE_DEVICES."""

from __future__ import annotations

from tipcgen.dialects.base import Dialect, F, Layout, Row, header
from tipcgen.dialects.chains.ptq import DEVICE, WHOLE_INFER_ONLY
from tipcgen.dialects.steps import (
    ChainTable,
    Command,
    Deviation,
    Item,
    Join,
    Key,
    Lit,
    Loop,
    Param,
    Pick,
    Skip,
    Val,
    When,
)

# fmt: off
# upstream's export of a non-`null` item names variables it never sets (its weights' and output
# directory's keys, the log's directory): only `null` items run as upstream means them
EXPORT = Pick("pyinfer.export", "export_kind", ((("null",), (), "none"),),
              "is not null (upstream's export step names variables it never sets)")
NO_EXPORT = Deviation(
    "infer-export-refused",
    "refuses a config whose infer_export is anything but `null` before anything runs (exit 2)",
    "upstream's export command for such an item is built from variables the script never sets (the "
    "weights' and output keys, the log directory: its log goes to `/python_infer_gpu_...log`)",
)


def infer(device: str) -> tuple:
    """The Python inference's words on the CPU or the GPU, in upstream's order for each."""
    common = (Param("pyinfer.model", "set_model_dir", value=(Item("infer_model"),)),
              Param("pyinfer.batch_size", "set_batchsize", value=(Item("batch_size"),)))
    data = (Param("pyinfer.data", "set_infer_data"), Param("pyinfer.benchmark", "set_benchmark"))
    rec, extra = Param("pyinfer.rec_model", "set_infer_params0"), Param("pyinfer.extra", "set_infer_params1")
    precision = Param("pyinfer.precision", "set_precision", value=(Item("precision"),))
    head = (Val("python"), Val("pyinfer.script"), Join((Key("pyinfer.use_gpu"), Lit("="), Item("use_gpu"))))
    if device == "cpu":
        return (*head, Param("pyinfer.use_mkldnn", "set_mkldnn", value=(Item("use_mkldnn"),)),
                Param("pyinfer.threads", "set_cpu_threads", value=(Item("threads"),)), *common, rec, *data,
                precision, extra)
    return (*head, Param("pyinfer.use_trt", "set_tensorrt", value=(Item("use_trt"),)), precision, *common,
            *data, extra, rec)


CPU_LOG = "python_infer_cpu_usemkldnn_{use_mkldnn}_threads_{threads}_precision_{precision}_batchsize_{batch_size}.log"
GPU_LOG = "python_infer_gpu_usetrt_{use_trt}_precision_{precision}_batchsize_{batch_size}.log"
CPU = Loop("pyinfer.use_mkldnn", "use_mkldnn", (
    Skip((("use_mkldnn", "False", True), ("is_quant", "True", True))),
    Loop("pyinfer.threads", "threads", (
        Loop("pyinfer.batch_size", "batch_size", (
            Loop("pyinfer.precision", "precision", (
                Skip((("use_mkldnn", "False", True), ("precision", "fp16", True))),
                Skip((("is_quant", "True", True), ("precision", "int8", False))),
                Command("infer", infer("cpu"), CPU_LOG, "_save_log_path", shown="{cmd} > {log} 2>&1 ",
                        note="The Python inference on the CPU."),
            )),
        )),
    )),
), note="On the CPU: each mkldnn x threads x batch size x precision (not fp16 without mkldnn; a quantized\n"
        "model only with mkldnn, in int8).")
GPU = Loop("pyinfer.use_trt", "use_trt", (
    Loop("pyinfer.precision", "precision", (
        Skip((("is_quant", "False", True), ("precision", "*int8*", True))),
        Skip((("precision", "*fp16*", True), ("use_trt", "False", True))),
        Skip((("precision", "*int8*", True), ("use_trt", "False", True))),
        Skip((("use_trt", "False", True), ("is_quant", "True", True))),
        Skip((("precision", "*int8*", True), ("is_quant", "True", True))),
        Loop("pyinfer.batch_size", "batch_size", (
            Command("infer", infer("gpu"), GPU_LOG, "_save_log_path", shown="{cmd} > {log} 2>&1 ",
                    note="The Python inference on the GPU."),
        )),
    )),
), note="On the GPU: each TensorRT x precision x batch size (int8 only for a quantized model, fp16 and\n"
        "int8 only with TensorRT; a quantized model only with TensorRT, not in int8).")
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"), ("python", "value", "python"),
    ("infer_model_dir_list", "value", "pyinfer.model_dir"), ("infer_export_list", "value", "pyinfer.export"),
    ("infer_is_quant", "value", "pyinfer.quant"), ("inference_py", "value", "pyinfer.script"),
    ("use_gpu_key", "key", "pyinfer.use_gpu"), ("use_gpu_list", "value", "pyinfer.use_gpu"),
    ("use_mkldnn_key", "key", "pyinfer.use_mkldnn"), ("use_mkldnn_list", "value", "pyinfer.use_mkldnn"),
    ("cpu_threads_key", "key", "pyinfer.threads"), ("cpu_threads_list", "value", "pyinfer.threads"),
    ("batch_size_key", "key", "pyinfer.batch_size"), ("batch_size_list", "value", "pyinfer.batch_size"),
    ("use_trt_key", "key", "pyinfer.use_trt"), ("use_trt_list", "value", "pyinfer.use_trt"),
    ("precision_key", "key", "pyinfer.precision"), ("precision_list", "value", "pyinfer.precision"),
    ("infer_model_key", "key", "pyinfer.model"), ("image_dir_key", "key", "pyinfer.data"),
    ("infer_img_dir", "value", "pyinfer.data"), ("rec_model_key", "key", "pyinfer.rec_model"),
    ("rec_model_value", "value", "pyinfer.rec_model"), ("benchmark_key", "key", "pyinfer.benchmark"),
    ("benchmark_value", "value", "pyinfer.benchmark"), ("infer_key1", "key", "pyinfer.extra"),
    ("infer_value1", "value", "pyinfer.extra"),
)
# Its first line is a header named for the model (the Jetson config's: `infer_params`): no section
# another script could refuse by its name, so a line of default bytes, as a separator's (another
# model's name is kept as the config's own line), naming no section (dialects.first_sections).
HEADER = Row("sep", text=header("infer_params"))
LISTS = ("pyinfer.use_gpu", "pyinfer.use_mkldnn", "pyinfer.threads", "pyinfer.batch_size", "pyinfer.use_trt",
         "pyinfer.precision")
PADDLEOCR_INFER_PYTHON = Layout(
    "paddleocr_infer_python",
    "PaddleOCR Python inference config (20 lines, test_inference_python.sh)",
    (HEADER, F("model_name", "model_name"), F("python", "python"),
     F("pyinfer.model_dir", "infer_model"), F("pyinfer.export", "infer_export"), F("pyinfer.quant", "infer_quant"),
     F("pyinfer.script", "inference"), F("pyinfer.use_gpu", "--use_gpu"), F("pyinfer.use_mkldnn", "--enable_mkldnn"),
     F("pyinfer.threads", "--cpu_threads"), F("pyinfer.batch_size", "--rec_batch_num"),
     F("pyinfer.use_trt", "--use_tensorrt"), F("pyinfer.precision", "--precision"),
     F("pyinfer.model", lint_keys=("--det_model_dir",)), F("pyinfer.data", "--image_dir"),
     F("pyinfer.rec_model", lint_keys=("--rec_model_dir",)), F("pyinfer.benchmark", "--benchmark"),
     F("pyinfer.extra", lint_keys=("null",)), F("pyinfer.extra2", lint_keys=("null",))),
    Dialect(
        family="chain",
        title=("Python 推理测试", "Python inference test"),
        values_to_colon=True,
        script="test_inference_python.sh",
        status_log="results_python.log",
        mode_required=True,
        gpuid_arg=True,  # `bash SCRIPT CONFIG whole_infer GPUID`
        runners=("paddleocr_infer_python",),
        reads=READS,
        log_name_roles=("pyinfer.use_mkldnn", "pyinfer.threads", "pyinfer.batch_size", "pyinfer.use_trt",
                        "pyinfer.precision"),
        matrix_roles=("pyinfer.model_dir", *LISTS),
        command_roles=("pyinfer.script",),
        table=ChainTable("whole_infer", "./test_tipc/output/{model_name}/{mode}",
                         "{verdict} with command - {model} - {command} - {log} ", (  # its status_check
            EXPORT,
            Loop("pyinfer.model_dir", "infer_model", (
                Loop("pyinfer.use_gpu", "use_gpu", (
                    When("device", ("cpu",), (CPU,)),
                    When("device", ("gpu",), (GPU,)),
                ), note="Each use_gpu: False or cpu on the CPU, True or gpu on the GPU (upstream only echoes for\n"
                        "another).", branch=DEVICE),
            ), note="Each inference model, with the infer_quant item at its position.",
                paired=("pyinfer.quant", "is_quant")),
        ), deviations=(WHOLE_INFER_ONLY, NO_EXPORT), gpuid_env=True),
    ),
    read_lines=20,
    detect=lambda sig: (
        "`infer_model:`, `infer_export:` and `infer_quant:` keys after the python line (PaddleOCR "
        "test_inference_python.sh)"
        if sig.key(3) == "infer_model" and sig.key(4) == "infer_export" and sig.key(5) == "infer_quant"
        and sig.key(6) == "inference" else None
    ),
)
# fmt: on
