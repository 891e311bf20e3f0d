"""The models tutorials' test_inference_cpp.sh: the classifier's C++ binary config (`key value`
lines: PaddleSeg's device lines, then its model's; the first 14 lines read, blank lines dropped) and
what it runs (a table). Upstream takes the config alone and runs the classification demo built before
the run (./deploy/inference_cpp/build/clas_system) once, given the config file as it was given and
./images/demo.jpg; its log is cpp_infer_<use_gpu's key>.log when use_gpu is a whole number above 0
(`test -gt 0`), else cpp_infer_cpu.log, in ./test_tipc/output/<model_name>/cpp_infer/ (their names say
`//`); its status lines end in `!` and name no log (its status_check gets four arguments)."""

from __future__ import annotations

from tipcgen.dialects.base import TEXT, Dialect, F, Layout
from tipcgen.dialects.chains.paddleseg_cpp_binary import DEVICE_ROWS, SHOWN
from tipcgen.dialects.steps import ChainTable, Command, Config, Lit, Pick, When


# fmt: off
def _run(log: str, note: str) -> Command:
    return Command("infer", (Lit("./deploy/inference_cpp/build/clas_system"), Config(), Lit("./images/demo.jpg")),
                   log, "_save_log_path", shown=SHOWN, names_log=False, note=note)


STATUS = "{verdict} with command - {model} - {command}!  "  # its status_check, given no log
TABLE = ChainTable("cpp_infer", "./test_tipc/output/{model_name}/cpp_infer/", STATUS, (
    Pick("cpp_binary.use_gpu", "gpu", (), "", positive="on", default="off"),
    When("gpu", ("on",), (_run("cpp_infer_use_gpu.log", "The demo on the GPU."),),
         note="use_gpu a whole number above 0 (upstream's `test -gt 0`): on the GPU."),
    When("gpu", ("off",), (_run("cpp_infer_cpu.log", "The demo on the CPU."),), note="Else on the CPU."),
))
MODELS_CPP_BINARY = Layout(
    "models_cpp_binary",
    "models tutorial C++ binary config (`key value` lines, test_inference_cpp.sh)",
    (*DEVICE_ROWS, TEXT("# cls config"), F("cpp_binary.cls_model_path", "cls_model_path", separator="  "),
     F("cpp_binary.cls_params_path", "cls_params_path"), F("cpp_binary.resize_short_size", "resize_short_size"),
     F("cpp_binary.crop_size", "crop_size")),
    Dialect(
        family="chain",
        title=("C++ 预测测试", "C++ inference test"),
        runners=("models_cpp_binary",),
        script="test_inference_cpp.sh",
        status_log="results_infer_cpp.log",
        reads=(("model_name", "value", "model_name"), ("use_gpu_value", "value", "cpp_binary.use_gpu")),
        table=TABLE,
    ),
    read_lines=14,
    separator=" ",
    detect=lambda sig: (
        "`# model load config` with `# cls config` on its 7th line (models tutorial test_inference_cpp.sh)"
        if sig.lines[:1] == ("# model load config",) and sig.lines[6:7] == ("# cls config",) else None
    ),
)
# fmt: on
