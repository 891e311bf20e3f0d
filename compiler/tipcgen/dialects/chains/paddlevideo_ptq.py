"""PaddleVideo's test_ptq_inference_python.sh: its 24 lines, and what it runs in whole_infer (a
table): the quantization (PTQ) of the inference model with the model's quantization config and its
data list, then the quantized model's inference for each use_gpu item (`False`/`cpu` on the CPU,
`True`/`gpu` on the GPU; any other item only echoes) and each batch size, with the model's config
and the model and params files its lines name. Logs in ./log/<model_name>/<MODE>/, status lines
without a log (its status_check gets four arguments). It reads its use_gpu key twice, from the ptq
lines, then from the inference lines: the later read wins (dialects/chains/ptq.py says the same of
PaddleSeg's and the models tutorials' near twins, whose other lines differ)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import SEP, F, H, Layout
from tipcgen.dialects.chains.ptq import DEVICE, PTQ_DIALECT, WHOLE_INFER_ONLY, other_config
from tipcgen.dialects.steps import ChainTable, Command, Item, Join, Key, Lit, Loop, Param, Val

# fmt: off
# the quantization's lines and the variables upstream reads them into (`<var>_key`, `<var>_value`)
QUANT = (("ptq.config", "--config", "quant_config_file"), ("ptq.model_path", "-o inference_model_dir", "model_path"),
         ("ptq.output_dir", "-o quant_output_dir", "output_dir"),
         ("ptq.data_dir", "-o DATASET.quant.data_prefix", "data_dir"),
         ("ptq.data_anno", "-o DATASET.quant.file_path", "data_anno"),
         ("ptq.batch_num", "-o DATASET.batch_nums", "batch_num"),
         ("ptq.batch_size", "-o DATASET.batch_size", "quant_batch_size"))
# the inference's lines (after its script, use_gpu and batch sizes) and their variables
INFER_KV = (("ptq.infer.config", "infer_config_file"), ("ptq.infer.model", "infer_model"),
            ("ptq.infer.params", "infer_params"), ("ptq.infer.benchmark", "benchmark"))
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"), ("python", "value", "python"),
    ("use_gpu_key", "key", "ptq.infer.use_gpu"), ("use_gpu_value", "value", "ptq.use_gpu"),
    *((f"{var}_{kind}", kind, role) for role, _key, var in QUANT for kind in ("key", "value")),
    ("train_py", "value", "ptq.script"), ("inference_py", "value", "ptq.infer.script"),
    ("use_gpu_list", "value", "ptq.infer.use_gpu"),
    ("infer_batch_size_key", "key", "ptq.infer.batch_size"), ("infer_batch_size_list", "value", "ptq.infer.batch_size"),
    *((f"{var}_{kind}", kind, role) for role, var in INFER_KV for kind in ("key", "value")),
    ("infer_video_key", "key", "ptq.infer.data"), ("infer_video_dir", "value", "ptq.infer.data"),
)
EXPORT = (Val("python"), Val("ptq.script"), Param("ptq.infer.use_gpu", "set_use_gpu", value="ptq.use_gpu"),
          Param("ptq.config", "set_config_file"), Param("ptq.model_path", "set_model_path"),
          Param("ptq.batch_num", "set_batch_num"), Param("ptq.batch_size", "set_batch_size"),
          Param("ptq.data_dir", "set_data_dir"), Param("ptq.data_anno", "set_data_anno"),
          Param("ptq.output_dir", "set_output_dir"))
INFER = (Val("python"), Val("ptq.infer.script"), Join((Key("ptq.infer.use_gpu"), Lit("="), Item("use_gpu"))),
         Param("ptq.infer.config", "set_config_file_path"), Param("ptq.infer.model", "set_model_file_path"),
         Param("ptq.infer.params", "set_params_file_path"),
         Param("ptq.infer.batch_size", "set_batchsize", value=(Item("batch_size"),)),
         Param("ptq.infer.data", "set_infer_data"), Param("ptq.infer.benchmark", "set_benchmark"))
SHOWN = "{cmd} > {log} 2>&1 "  # its status lines show the redirection (and a blank)
STATUS = "{verdict} with command - {model} - {command} - {log} "  # its status_check, given no log
TABLE = ChainTable("whole_infer", "./log/{model_name}/{mode}", STATUS, (
    # upstream names it `${MODE}_export_${Count}.log`, Count never set: its MODE is whole_infer
    Command("export", EXPORT, "whole_infer_export_.log", "export_log_path", shown=SHOWN, names_log=False,
            note="The quantization (PTQ) of the inference model."),
    Loop("ptq.infer.use_gpu", "use_gpu", (
        Loop("ptq.infer.batch_size", "batch_size", (
            Command("infer", INFER, "python_infer_{device}_batchsize_{batch_size}.log", "_save_log_path", shown=SHOWN,
                    names_log=False, note="The quantized model's inference (the model files its lines name)."),
        ), note="Each batch size."),
    ), note="Each use_gpu: False or cpu on the CPU, True or gpu on the GPU (upstream only echoes for another).",
        branch=DEVICE),
), (replace(WHOLE_INFER_ONLY, why=WHOLE_INFER_ONLY.why.replace("test_tipc/output/", "log/")),
    other_config("inference model line is not `--model_file:`")), requires=(("ptq.infer.model", "--model_file"),))
PADDLEVIDEO_PTQ = Layout(
    "paddlevideo_ptq",
    "PaddleVideo PTQ config (24 lines, test_ptq_inference_python.sh)",
    (H("ptq_params"), F("model_name", "model_name"), F("python", "python"), F("ptq.use_gpu", "--use_gpu"),
     *(F(role, key) for role, key, _var in QUANT), SEP, F("ptq.trainer", "trainer"), F("ptq.script", "ptq_train"),
     SEP, H("infer_params"), F("ptq.infer.script", "inference"), F("ptq.infer.use_gpu", "--use_gpu"),
     F("ptq.infer.config", "--config"), F("ptq.infer.batch_size", "--batch_size"),
     F("ptq.infer.model", "--model_file"), F("ptq.infer.params", "--params_file"), F("ptq.infer.data", "--input_file"),
     F("ptq.infer.benchmark", "--enable_benchmark")),
    replace(PTQ_DIALECT, runners=("paddlevideo_ptq",), values_to_colon=True, reads=READS, table=TABLE),
    read_lines=32,
    detect=lambda sig: (
        "ptq_params with `-o inference_model_dir:` and `--model_file:` keys (PaddleVideo test_ptq_inference_python.sh)"
        if "ptq_params" in sig.headers and sig.key(5) == "-o inference_model_dir" and sig.key(20) == "--model_file"
        else None
    ),
)
# fmt: on
