"""PaddleDetection: the OCR-family layout (51 lines, `trainer:` on line 14) with Detection's own keys
and a whole_infer block of its own: `kl_quant_export` on line 35 (export.kl_quant), `##` on 36,
`infer_mode` on 37 (whole_infer.models: which trainer's export each whole_infer run infers)
paired with `infer_quant` on 38 (whole_infer.quant).

Its runner is `paddledetection` (plan/runners/paddledetection.py), which follows PaddleDetection's
own test_train_inference_python.sh: see that module for what the script does differently.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from tipcgen.dialects.base import SEP, F, H, Signature, header, variant
from tipcgen.dialects.paddleocr import OCR_RUNNER, PADDLEOCR

# Keys no other repo's train config uses (checked over the whole corpus). `trained_model_name` is
# the layout's fixed key on line 10, so a config built from a spec that leaves lines 35 and 37
# alone is still told apart.
_DETECTION_KEYS = ("trained_model_name", "kl_quant_export", "infer_mode")


def _detect(sig: Signature) -> Optional[str]:
    if sig.trainer != 14:
        return None
    keys = set(sig.keys[:40])
    found = [f"`{k}`" for k in _DETECTION_KEYS if k in keys]
    if found:
        return f"`trainer:` on line 14 and {' / '.join(found)} (PaddleDetection)"
    return None


# Index -> row, where PaddleDetection differs from PaddleOCR's table. `lint_keys` are the keys
# every corpus config carries on that line: lint reports a line shifted onto or off them.
_CHANGES = {
    4: F("train.device", lint_keys=("use_gpu",)),
    5: F("train.autocast", lint_keys=("auto_cast",)),
    6: F("train.epochs", lint_keys=("epoch",)),
    7: F("train.save_dir", lint_keys=("save_dir",)),
    8: F("train.batch_size", lint_keys=("TrainReader.batch_size",)),
    9: F("train.pretrained", lint_keys=("pretrain_weights",)),
    10: F("train.model_file", "trained_model_name"),
    # train_param_key1/value1: `filename:null` (the script adds `filename=<model_name>` itself)
    12: F("train.extra", lint_keys=("filename",)),
    22: H("eval_params"),  # no trailing space, unlike PaddleOCR's
    27: F("export.save_dir", lint_keys=("--output_dir",)),
    28: F("export.weights", lint_keys=("weights",)),
    # line 34: export2, or export_onnx (the script then also exports ONNX): the slot's export_name
    35: F("export.kl_quant", "kl_quant_export"),
    36: SEP,
    37: F("whole_infer.models", "infer_mode"),
    40: F("inference.use_gpu", lint_keys=("--device",)),
    41: F("inference.mkldnn", lint_keys=("--enable_mkldnn",)),
    42: F("inference.threads", lint_keys=("--cpu_threads",)),
    43: F("inference.batch_size", lint_keys=("--batch_size",)),
    44: F("inference.tensorrt", lint_keys=("--use_tensorrt",)),
    45: F("inference.precision", lint_keys=("--run_mode",)),
    46: F("inference.model_dir", lint_keys=("--model_dir",)),
    47: F("inference.data", lint_keys=("--image_dir", "--video_file")),
    48: F("inference.save_log", lint_keys=("--save_log_path",)),
    49: F("inference.benchmark", lint_keys=("--run_benchmark",)),
    50: F("inference.extra", lint_keys=("--trt_max_shape",)),
}

# The variables the runner's bash reads (templates/runner_paddledetection.sh.j2), upstream's names:
# the family's, without those of lines Detection does not have or its script does not read (the
# epoch and batch-size tables are read from their whole lines: see det_mode_value), and its own.
_NOT_READ = (
    "epoch_value",
    "train_batch_table",
    "autocast_key",
    "inference_dir",
    "infer_model_dir_list",
    "infer_export_list",
    "infer_is_quant",
    "use_trt_key",
    "use_trt_list",
    "save_log_key",
)
_READS = (
    *(read for read in OCR_RUNNER.reads if read[0] not in _NOT_READ),
    ("norm_key", "key", "trainer.norm.train"),
    ("save_export_value", "value", "export.save_dir"),
    ("export_weight_value", "value", "export.weights"),
    ("export_onnx_key", "key", "trainer.slot2.export"),
    ("kl_quant_export", "value", "export.kl_quant"),
    ("infer_mode_list", "value", "whole_infer.models"),
    ("infer_is_quant_list", "value", "whole_infer.quant"),
)

DETECTION_RUNNER = replace(
    OCR_RUNNER,
    runners=("paddledetection",),
    device_whole=True,  # `use_gpu=<the whole value>` for every gpu_list entry
    reads=_READS,
    # no TensorRT loop: `--run_mode` (inference.precision) names the engine
    log_name_roles=tuple(role for role in OCR_RUNNER.log_name_roles if role != "inference.tensorrt"),
    matrix_roles=tuple(role for role in OCR_RUNNER.matrix_roles if role != "inference.tensorrt"),
)

PADDLEDETECTION = replace(
    variant(
        PADDLEOCR,
        "paddledetection",
        "PaddleDetection train-type config (51 lines)",
        DETECTION_RUNNER,
        _CHANGES,
        detect=_detect,
    ),
    # Detection writes this benchmark header with 27 `=` on the right (the family default is 26).
    section_headers={"infer_benchmark_params": header("infer_benchmark_params")},
)
