"""The models tutorials' test_ptq_inference_python.sh (dialects/chains/ptq.py: what it shares with
PaddleSeg's): its 20 lines; the inference reads its model from the quantization's output_dir,
its status lines `...!` name no log. Its quantization's `eval` is commented out: a deviation."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import F, Layout
from tipcgen.dialects.chains.ptq import PTQ_DIALECT, TOP, TRAINER, ptq_reads, ptq_table
from tipcgen.dialects.steps import Deviation, Param

EXPORT_RUNS = Deviation(
    "ptq-export-runs",
    "runs the quantization (its post_quant command) and writes its status line by how it ended",
    "upstream's script has the quantization's `eval` commented out: it only prints the command and writes "
    "`Run successfully` for it (the echo's status), then infers whatever model the output directory holds",
    (
        r"^steps: plan runs more \(export\)$",
        r"^logs: plan \+\[\$LOG/export\.log\]$",
        r"^status: export verdict upstream 'Run successfully' vs plan 'Run failed'$",
    ),
)
# fmt: off
MODELS_PTQ = Layout(
    "models_ptq",
    "models tutorial PTQ config (20 lines, test_ptq_inference_python.sh)",
    (*TOP, F("ptq.use_gpu", "--use_gpu"), F("ptq.model_path", "--model_path"), F("ptq.output_dir", "--output_dir"),
     F("ptq.data_dir", "--data_dir"), F("ptq.batch_num", "--batch_num"), F("ptq.batch_size", "--batch_size"),
     *TRAINER, F("ptq.infer.use_gpu", "--use-gpu"), F("ptq.infer.batch_size", "--batch-size"),
     F("ptq.infer.model", "--model-dir"), F("ptq.infer.data", "--img-path"), F("ptq.infer.benchmark", "--benchmark")),
    replace(
        PTQ_DIALECT,
        runners=("models_ptq",),
        reads=ptq_reads("ptq.data_dir", ("infer_model_key", "key", "ptq.infer.model")),
        # its inference's model: the quantization's output directory (upstream's _model_dir)
        table=ptq_table("ptq.data_dir", Param("ptq.infer.model", "set_model_dir", value="ptq.output_dir"),
                        "{verdict} with command - {model} - {command}!  ", False, "export_log_path",
                        "{cmd} > {log} 2>&1 ", "--img-path", (EXPORT_RUNS,)),
    ),
    read_lines=32,
    detect=lambda sig: (
        "ptq_params with `--use_gpu:` and `--model_path:` keys (the models tutorials' test_ptq_inference_python.sh)"
        if "ptq_params" in sig.headers and sig.key(3) == "--use_gpu" and sig.key(4) == "--model_path" else None
    ),
)
# fmt: on
