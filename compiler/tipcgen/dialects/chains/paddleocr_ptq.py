"""PaddleOCR's test_ptq_inference_python.sh (its KL quantization): its 21 lines (a header, mostly
`kl_quant_params`; four configs of the table and KIE models open with `train_params`), and what it
runs in whole_infer (a table): for each inference model of its `infer_model` list, the
`infer_export` item at its position, unless `null`, quantizes it (the weights' and the output's
keys of its lines 4 and 5, the output `<model>_klquant`), then the Python inference of that
output (of the model itself after a `null`), always as a quantized model: per use_gpu item, on the
CPU each mkldnn x threads x batch size x precision, on the GPU each TensorRT x precision x batch
size, only int8 (fp16 without mkldnn left out too); logs and status lines in
./test_tipc/output/<model_name>/whole_infer/. GPUID, when given, is CUDA_VISIBLE_DEVICES.

Upstream reads its config's first 17 lines only: the lines after `--image_dir` (a null line, the
benchmark's, two more) are never read, so their parameters are blanks in every command (as here)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import F, Layout, Row, header
from tipcgen.dialects.chains.ptq import DEVICE, PTQ_DIALECT, WHOLE_INFER_ONLY
from tipcgen.dialects.steps import ChainTable, Command, Item, Join, Key, Lit, Loop, Param, Skip, Val, When

# fmt: off
# the lines upstream never reads (its awk stops at line 17): a blank parameter each
UNREAD = Lit(" ")


def infer(device: str, model: tuple) -> tuple:
    """The Python inference's words on the CPU or the GPU, in upstream's order for each; `model`:
    the words of the model directory."""
    head = (Val("python"), Val("klquant.infer.script"), Join((Key("klquant.infer.use_gpu"), Lit("="), Item("use_gpu"))))
    model_dir = Param("klquant.infer.model", "set_model_dir", value=model)
    batch = Param("klquant.infer.batch_size", "set_batchsize", value=(Item("batch_size"),))
    precision = Param("klquant.infer.precision", "set_precision", value=(Item("precision"),))
    data = Param("klquant.infer.data", "set_infer_data")
    if device == "cpu":
        return (*head, Param("klquant.infer.use_mkldnn", "set_mkldnn", value=(Item("use_mkldnn"),)),
                Param("klquant.infer.threads", "set_cpu_threads", value=(Item("threads"),)), model_dir, batch, UNREAD,
                data, UNREAD, precision, UNREAD)
    return (*head, Param("klquant.infer.use_trt", "set_tensorrt", value=(Item("use_trt"),)), precision, model_dir,
            batch, data, UNREAD, UNREAD, UNREAD)


CPU_LOG = "python_infer_cpu_usemkldnn_{use_mkldnn}_threads_{threads}_precision_{precision}_batchsize_{batch_size}.log"
GPU_LOG = "python_infer_gpu_usetrt_{use_trt}_precision_{precision}_batchsize_{batch_size}.log"
SHOWN = "{cmd} > {log} 2>&1 "


def inference(model: tuple, what: str) -> Loop:
    """Per use_gpu item the inference matrix of the model `model` names (`what`: the notes' words)."""
    cpu = Loop("klquant.infer.use_mkldnn", "use_mkldnn", (
        Loop("klquant.infer.threads", "threads", (
            Loop("klquant.infer.batch_size", "batch_size", (
                Loop("klquant.infer.precision", "precision", (
                    Skip((("use_mkldnn", "False", True), ("precision", "fp16", True))),
                    Skip((("precision", "int8", False),)),
                    Command("infer", infer("cpu", model), CPU_LOG, "_save_log_path", shown=SHOWN,
                            note=f"The Python inference of {what} on the CPU."),
                )),
            )),
        )),
    ), note="On the CPU: each mkldnn x threads x batch size x precision (int8 only, not fp16 without mkldnn).")
    gpu = Loop("klquant.infer.use_trt", "use_trt", (
        Loop("klquant.infer.precision", "precision", (
            Skip((("precision", "int8", False),)),
            Loop("klquant.infer.batch_size", "batch_size", (
                Command("infer", infer("gpu", model), GPU_LOG, "_save_log_path", shown=SHOWN,
                        note=f"The Python inference of {what} on the GPU."),
            )),
        )),
    ), note="On the GPU: each TensorRT x precision x batch size (int8 only).")
    return Loop("klquant.infer.use_gpu", "use_gpu", (
        When("device", ("cpu",), (cpu,)),
        When("device", ("gpu",), (gpu,)),
    ), note="Each use_gpu: False or cpu on the CPU, True or gpu on the GPU (upstream only echoes for another).",
        branch=DEVICE)


EXPORT = (Val("python"), Item("export"),
          Param("klquant.weights", "set_export_weight", value=(Item("infer_model"),)),
          Param("klquant.save_dir", "set_save_infer_key", value=(Item("infer_model"), Lit("_klquant"))))
READS = (  # what the script reads and uses, named as upstream's
    ("model_name", "value", "model_name"), ("python", "value", "python"),
    ("export_weight", "key", "klquant.weights"), ("save_infer_key", "key", "klquant.save_dir"),
    ("infer_model_dir_list", "value", "klquant.model_dir"), ("infer_export_list", "value", "klquant.export"),
    ("inference_py", "value", "klquant.infer.script"),
    ("use_gpu_key", "key", "klquant.infer.use_gpu"), ("use_gpu_list", "value", "klquant.infer.use_gpu"),
    ("use_mkldnn_key", "key", "klquant.infer.use_mkldnn"), ("use_mkldnn_list", "value", "klquant.infer.use_mkldnn"),
    ("cpu_threads_key", "key", "klquant.infer.threads"), ("cpu_threads_list", "value", "klquant.infer.threads"),
    ("batch_size_key", "key", "klquant.infer.batch_size"), ("batch_size_list", "value", "klquant.infer.batch_size"),
    ("use_trt_key", "key", "klquant.infer.use_trt"), ("use_trt_list", "value", "klquant.infer.use_trt"),
    ("precision_key", "key", "klquant.infer.precision"), ("precision_list", "value", "klquant.infer.precision"),
    ("infer_model_key", "key", "klquant.infer.model"), ("image_dir_key", "key", "klquant.infer.data"),
    ("infer_img_dir", "value", "klquant.infer.data"),
)
TABLE = ChainTable("whole_infer", "./test_tipc/output/{model_name}/{mode}",
                   "{verdict} with command - {model} - {command} - {log} ", (  # its status_check
    Loop("klquant.model_dir", "infer_model", (
        # after a `null` export item: the model itself, then the next item (upstream's else branch)
        When("export", ("null",), (inference((Item("infer_model"),), "the model itself"),)),
        Skip((("export", "null", True),)),
        Command("export", EXPORT, "whole_infer_export_{Count}.log", "export_log_path", shown=SHOWN,
                note="The KL quantization of the inference model (its output: <model>_klquant)."),
        inference((Item("infer_model"), Lit("_klquant")), "the quantized model"),
    ), note="Each inference model, with the infer_export item at its position.", paired=("klquant.export", "export"),
        index="Count"),
), (WHOLE_INFER_ONLY,), gpuid_env=True)
# Its first line: a header most configs name kl_quant_params (four, train_params): a line of
# default bytes, as a separator's (another name is kept as the config's own line).
HEADER = Row("sep", text=header("kl_quant_params"))
LISTS = ("klquant.infer.use_gpu", "klquant.infer.use_mkldnn", "klquant.infer.threads", "klquant.infer.batch_size",
         "klquant.infer.use_trt", "klquant.infer.precision")
PADDLEOCR_PTQ = Layout(
    "paddleocr_ptq",
    "PaddleOCR KL quantization config (21 lines, test_ptq_inference_python.sh)",
    (HEADER, F("model_name", "model_name"), F("python", "python"),
     F("klquant.weights", "Global.pretrained_model"), F("klquant.save_dir", "Global.save_inference_dir"),
     F("klquant.model_dir", "infer_model"), F("klquant.export", "infer_export"), F("klquant.quant", "infer_quant"),
     F("klquant.infer.script", "inference"), F("klquant.infer.use_gpu", "--use_gpu"),
     F("klquant.infer.use_mkldnn", "--enable_mkldnn"), F("klquant.infer.threads", "--cpu_threads"),
     F("klquant.infer.batch_size", "--rec_batch_num"), F("klquant.infer.use_trt", "--use_tensorrt"),
     F("klquant.infer.precision", "--precision"), F("klquant.infer.model", lint_keys=("--det_model_dir",)),
     F("klquant.infer.data", "--image_dir"), F("klquant.infer.save_log", lint_keys=("null",)),
     F("klquant.infer.benchmark", "--benchmark"), F("klquant.infer.extra", lint_keys=("null",)),
     F("klquant.infer.extra2", lint_keys=("null",))),
    replace(
        PTQ_DIALECT,
        gpuid_arg=True,  # `bash SCRIPT CONFIG whole_infer GPUID`
        runners=("paddleocr_ptq",),
        reads=READS,
        log_name_roles=LISTS[1:],
        matrix_roles=("klquant.model_dir", *LISTS),
        command_roles=("klquant.infer.script", "klquant.export"),
        table=TABLE,
    ),
    read_lines=21,
    detect=lambda sig: (
        "`Global.pretrained_model:` and `Global.save_inference_dir:` keys, then `infer_model:`, "
        "`infer_export:` and `infer_quant:` (PaddleOCR test_ptq_inference_python.sh)"
        if sig.key(5) == "infer_model" and sig.key(6) == "infer_export" and sig.key(7) == "infer_quant"
        and sig.key(8) == "inference" else None
    ),
)
# fmt: on
