"""PaddleSeg's test_inference_cpp.sh: the C++ binary's own `key value` config (its first 14 lines
read, blank lines dropped; a resize's width and height may follow), and what it runs (a table).
Upstream takes the config alone and runs the segmentation demo built before the run
(./test_tipc/cpp/build/seg_system) once, given the config file as it was given and a demo image:
humanseg_demo.jpg for the three human segmentation models, cityscapes_demo.png for any other. Its
log's name says what the config turns on, by nested `test <value> -gt 0` (a whole number above 0):
use_gpu, then use_tensorrt, then use_fp16; on the CPU use_mkldnn. It leaves MODE unset: its logs
are in ./test_tipc/output/<model_name>/ (their names say `//`), its status lines name the log."""

from __future__ import annotations

from tipcgen.dialects.base import TEXT, Dialect, F, Layout
from tipcgen.dialects.steps import ChainTable, Command, Config, Deviation, Item, Join, Lit, Pick, When

# fmt: off
# The device lines both C++ binary configs (PaddleSeg's, the models tutorial's) start with.
DEVICE_ROWS = (TEXT("# model load config"), F("model_name", "model_name"),
               F("cpp_binary.use_gpu", "use_gpu", separator="  "), F("cpp_binary.gpu_id", "gpu_id", separator="  "),
               F("cpp_binary.gpu_mem", "gpu_mem", separator="  "),
               F("cpp_binary.threads", "cpu_math_library_num_threads", separator="  "))
SHOWN = "{cmd} > {log} 2>&1 "  # its status line shows the redirection (and a blank)
HUMANSEG = ("pphumanseg_lite", "deeplabv3p_resnet50", "fcn_hrnetw18_small")


def _on(role: str, var: str) -> Pick:
    """Upstream's `test ${value} -gt 0` of a role: `on` for a whole number above 0, else `off`."""
    return Pick(role, var, (), "", positive="on", default="off")


def _run(log: str, note: str) -> Command:
    image = Join((Lit("test_tipc/cpp/"), Item("image")))
    return Command("infer", (Lit("./test_tipc/cpp/build/seg_system"), Config(), image), log, "_save_log_path",
                   shown=SHOWN, note=note)


NO_MODE = Deviation(
    "cpp-logs-without-mode",
    "logs in ./test_tipc/output/<model_name>/ whatever MODE the caller's environment holds",
    "upstream's log directory ends in ${MODE}, a variable it never sets: a MODE exported by the caller moves its "
    "logs and status lines there (the TIPC docs run it with none set)",
)
STATUS = "{verdict} with command - {model} - {command} - {log}  "  # its status_check, given the log
TABLE = ChainTable("cpp_infer", "./test_tipc/output/{model_name}/", STATUS, (
    Pick("model_name", "image", ((HUMANSEG, (), "humanseg_demo.jpg"),), "", default="cityscapes_demo.png"),
    _on("cpp_binary.use_gpu", "gpu"), _on("cpp_binary.use_tensorrt", "trt"), _on("cpp_binary.use_fp16", "fp16"),
    _on("cpp_binary.use_mkldnn", "mkldnn"),
    When("gpu", ("on",), (
        When("trt", ("on",), (
            When("fp16", ("on",), (
                _run("infer_cpp_use_gpu_use_tensorrt_use_fp16.log", "The demo on the GPU, TensorRT in fp16."),
            )),
            When("fp16", ("off",), (
                _run("infer_cpp_use_gpu_use_tensorrt.log", "The demo on the GPU with TensorRT."),
            )),
        )),
        When("trt", ("off",), (_run("infer_cpp_use_gpu.log", "The demo on the GPU."),)),
    ), note="use_gpu a whole number above 0 (upstream's `test -gt 0`): on the GPU."),
    When("gpu", ("off",), (
        When("mkldnn", ("on",), (_run("infer_cpp_use_cpu_use_mkldnn.log", "The demo on the CPU with mkldnn."),)),
        When("mkldnn", ("off",), (_run("infer_cpp_use_cpu.log", "The demo on the CPU."),)),
    ), note="Else on the CPU."),
), deviations=(NO_MODE,))
READS = (("model_name", "value", "model_name"), ("use_gpu_value", "value", "cpp_binary.use_gpu"),
         ("use_mkldnn_value", "value", "cpp_binary.use_mkldnn"),
         ("use_tensorrt_value", "value", "cpp_binary.use_tensorrt"), ("use_fp16_value", "value", "cpp_binary.use_fp16"))
PADDLESEG_CPP_BINARY = Layout(
    "paddleseg_cpp_binary",
    "PaddleSeg C++ binary config (`key value` lines, test_inference_cpp.sh)",
    (*DEVICE_ROWS, F("cpp_binary.use_mkldnn", "use_mkldnn"), F("cpp_binary.use_tensorrt", "use_tensorrt"),
     F("cpp_binary.use_fp16", "use_fp16"), TEXT("# config"), F("cpp_binary.model_path", "model_path", separator="  "),
     F("cpp_binary.params_path", "params_path"), F("cpp_binary.is_normalize", "is_normalize"),
     F("cpp_binary.is_resize", "is_resize"), F("cpp_binary.resize_width", "resize_width"),
     F("cpp_binary.resize_height", "resize_height")),
    Dialect(
        family="chain",
        title=("C++ 预测测试", "C++ inference test"),
        runners=("paddleseg_cpp_binary",),
        script="test_inference_cpp.sh",
        status_log="results_infer_cpp.log",
        reads=READS,
        prepare_word_modes=("cpp_infer",),
        table=TABLE,
    ),
    read_lines=14,
    optional_rows=2,
    separator=" ",
    detect=lambda sig: (
        "`# model load config` with `use_mkldnn` on its 7th line (PaddleSeg test_inference_cpp.sh)"
        if sig.lines[:1] == ("# model load config",) and sig.lines[6:7] and sig.lines[6].split(" ")[0] == "use_mkldnn"
        else None
    ),
)
# fmt: on
