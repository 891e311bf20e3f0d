"""PaddleDetection's test_ptq_inference_python.sh: its 20 lines, and what it runs (a table): the
kl_quant export of the trained weights (PaddleDetection's post_quant.py, read like the paddle2onnx
chain's export lines), then the inference matrix on the quantized model: for each device item,
`cpu` infers for each mkldnn x threads x batch size, `gpu` for each run mode of `paddle` and
`trt_int8` (others are skipped silently) x batch size, any other item only echoes. Its MODE is
whole_infer whatever it is given (it reads its config argument only); logs in
./test_tipc/output/<model_name>/whole_infer/, status lines in results_ptq_python.log. Its
func_parser_value keeps a value whole (no cut at a second colon). It reads its export_param1 line
but runs nothing with it."""

from __future__ import annotations

from tipcgen.dialects.base import SEP, Dialect, F, H, Layout
from tipcgen.dialects.chains.ptq import PTQ_DIALECT
from tipcgen.dialects.steps import Branch, ChainTable, Command, Item, Lit, Loop, Param, Val, When

# fmt: off
EXPORT = (Val("python"), Val("ptq.export.kl_quant"), Param("ptq.export.weights", "set_export_weight"),
          Param("ptq.export.filename", value="model_name"), Param("ptq.export.save_dir", "set_save_export_dir"))
DIR = (Val("ptq.export.save_dir"), Lit("/"), Val("model_name"))  # where the export put the model
MODEL = Param("ptq.infer.model", "set_export_model_dir", value=DIR)
# what both devices' commands end with
TAIL = (Param("ptq.infer.batch_size", "set_batchsize", value=(Item("batch_size"),)),
        Param("ptq.infer.data", "set_image_dir"), Param("ptq.infer.benchmark", "set_run_benchmark"),
        Param("ptq.infer.extra", "set_infer_param1"))
DEVICE = Param("ptq.infer.device", "set_device", value=(Item("device"),))
CPU = (Val("python"), Val("ptq.infer.script"), DEVICE,
       Param("ptq.infer.mkldnn", "set_use_mkldnn", value=(Item("use_mkldnn"),)),
       Param("ptq.infer.threads", "set_cpu_threads", value=(Item("threads"),)), MODEL, *TAIL)
GPU = (Val("python"), Val("ptq.infer.script"), DEVICE,
       Param("ptq.infer.run_mode", "set_run_mode", value=(Item("run_mode"),)), MODEL, *TAIL)
SHOWN = "{cmd} > {log} 2>&1 "  # its status line shows the redirection (and a blank)
KV = (("ptq.export.save_dir", "save_export"), ("ptq.export.weights", "export_weight"),
      ("ptq.infer.data", "image_dir"), ("ptq.infer.benchmark", "run_benchmark"),
      ("ptq.infer.extra", "infer_param1"))
LISTS = (("ptq.infer.device", "device"), ("ptq.infer.mkldnn", "use_mkldnn"), ("ptq.infer.threads", "cpu_threads"),
         ("ptq.infer.batch_size", "batch_size"), ("ptq.infer.run_mode", "run_mode"))
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"), ("python", "value", "python"),
    ("filename_key", "key", "ptq.export.filename"),
    *((f"{var}_{kind}", kind, role) for role, var in KV for kind in ("key", "value")),
    ("kl_quant_export", "value", "ptq.export.kl_quant"), ("inference_py", "value", "ptq.infer.script"),
    *((f"{var}_{name}", kind, role) for role, var in LISTS for kind, name in (("key", "key"), ("value", "list"))),
    ("model_dir_key", "key", "ptq.infer.model"),
)
# upstream's `if [ ${device} = "cpu" ]; then ... elif [ ${device} = "gpu" ]; then ... else echo ...`
HARDWARE = Branch("hardware", ((("cpu",), "cpu"), (("gpu",), "gpu")),
                  "Does not support hardware other than CPU and GPU Currently!")
TABLE = ChainTable("whole_infer", "./test_tipc/output/{model_name}/{mode}",
                   "{verdict} with command - {model} - {command} - {log}  ", (  # its status_check
    Command("export", EXPORT, "export.log", "export_log_path", shown="{cmd}",
            note="The kl_quant export: the trained weights quantized (PTQ) and exported."),
    Loop("ptq.infer.device", "device", (
        When("hardware", ("cpu",), (
            Loop("ptq.infer.mkldnn", "use_mkldnn", (
                Loop("ptq.infer.threads", "threads", (
                    Loop("ptq.infer.batch_size", "batch_size", (
                        Command("infer", CPU, "python_infer_cpu_usemkldnn_{use_mkldnn}_threads_{threads}_mode_paddle"
                                "_batchsize_{batch_size}.log", "_save_log_path", shown=SHOWN,
                                note="The quantized model's inference on the CPU."),
                    ), note="Each batch size."),
                ), note="Each number of CPU threads."),
            ), note="Each mkldnn setting."),
        ), note="On the CPU: each mkldnn x threads x batch size."),
        When("hardware", ("gpu",), (
            Loop("ptq.infer.run_mode", "run_mode", (
                When("run_mode", ("paddle", "trt_int8"), (
                    Loop("ptq.infer.batch_size", "batch_size", (
                        Command("infer", GPU, "python_infer_gpu_mode_{run_mode}_batchsize_{batch_size}.log",
                                "_save_log_path", shown=SHOWN, note="The quantized model's inference on the GPU."),
                    ), note="Each batch size."),
                ), note="Only the run modes paddle and trt_int8 (upstream skips the others silently)."),
            ), note="Each run mode."),
        ), note="On the GPU: each run mode x batch size."),
    ), note="Each device: cpu, gpu (upstream only echoes for another).", branch=HARDWARE),
))
PADDLEDETECTION_PTQ = Layout(
    "paddledetection_ptq",
    "PaddleDetection PTQ config (20 lines, test_ptq_inference_python.sh)",
    (H("ptq_params"), F("model_name", "model_name"), F("python", "python"),
     F("ptq.export.filename", lint_keys=("filename",)), SEP,
     F("ptq.export.save_dir", "--output_dir"), F("ptq.export.weights", "weights"),
     F("ptq.export.kl_quant", "kl_quant_export"), F("ptq.export.extra", lint_keys=("export_param1",)), SEP,
     F("ptq.infer.script", "inference"), F("ptq.infer.device", "--device"), F("ptq.infer.mkldnn", "--enable_mkldnn"),
     F("ptq.infer.threads", "--cpu_threads"), F("ptq.infer.batch_size", "--batch_size"),
     F("ptq.infer.run_mode", "--run_mode"), F("ptq.infer.model", "--model_dir"), F("ptq.infer.data", "--image_dir"),
     F("ptq.infer.benchmark", "--run_benchmark"), F("ptq.infer.extra", lint_keys=("infer_param1",))),
    Dialect(
        family="chain",
        title=PTQ_DIALECT.title,
        runners=("paddledetection_ptq",),
        values_to_colon=False,
        script=PTQ_DIALECT.script,
        status_log="results_ptq_python.log",
        # the repo's prepare.sh serves its configs in the train-config modes too (PaddleSeg's alike)
        prepare_modes=PTQ_DIALECT.prepare_modes,
        # a train config is refused (upstream reads it by position and runs its lines as its own)
        family_sections=True,
        reads=READS,
        command_roles=("ptq.export.kl_quant",),
        # the lists whose items its logs' names carry (a run mode's: paddle or trt_int8 only)
        log_name_roles=("ptq.infer.mkldnn", "ptq.infer.threads", "ptq.infer.batch_size"),
        matrix_roles=tuple(role for role, _var in LISTS),
        table=TABLE,
    ),
    read_lines=20,
    detect=lambda sig: (
        "ptq_params with `filename:` and `kl_quant_export:` keys (PaddleDetection test_ptq_inference_python.sh)"
        if "ptq_params" in sig.headers and sig.key(3) == "filename" and sig.key(7) == "kl_quant_export" else None
    ),
)
# fmt: on
