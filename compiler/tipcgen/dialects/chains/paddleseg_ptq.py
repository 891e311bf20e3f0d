"""PaddleSeg's test_ptq_inference_python.sh (dialects/chains/ptq.py: what it shares with the models
tutorials'): its 20 lines, read at the indexes the script has, which are not the lines' own: its
use_gpu and output_dir lines are `##` separators here (blank parameters), its `--config` line is
read as the data directory; the inference reads its model from the inference `--config` line."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import SEP, F, Layout
from tipcgen.dialects.chains.ptq import PTQ_DIALECT, TOP, TRAINER, ptq_reads, ptq_table
from tipcgen.dialects.steps import Param

# fmt: off
PADDLESEG_PTQ = Layout(
    "paddleseg_ptq",
    "PaddleSeg PTQ config (20 lines, test_ptq_inference_python.sh)",
    (*TOP, SEP, F("ptq.model_path", "--model_dir"), SEP, F("ptq.config", "--config"), F("ptq.batch_num", "--batch_num"),
     F("ptq.batch_size", "--batch_size"), *TRAINER, F("ptq.infer.use_gpu", "--device"),
     F("ptq.infer.batch_size", "--batch_size"), F("ptq.infer.config", "--config"), F("ptq.infer.data", "--image_path"),
     F("ptq.infer.benchmark", "--benchmark")),
    replace(
        PTQ_DIALECT,
        runners=("paddleseg_ptq",),
        reads=ptq_reads("ptq.config", ("config_key", "key", "ptq.infer.config"),
                        ("config_value", "value", "ptq.infer.config")),
        table=ptq_table("ptq.config", Param("ptq.infer.config", "set_model_dir"),
                        "{verdict} with command - {model} - {command} - {log}  ", True, "_log_path",
                        "{cmd} > {log} 2>&1", "--image_path"),
    ),
    read_lines=32,
    detect=lambda sig: (
        "ptq_params with `--model_dir:` and `--config:` keys (PaddleSeg test_ptq_inference_python.sh)"
        if "ptq_params" in sig.headers and sig.key(4) == "--model_dir" and sig.key(17) == "--config" else None
    ),
)
# fmt: on
