"""PaddleOCR: the 51-line train-type layout and the trainer-slot runner (PaddleOCR's
test_train_inference_python.sh). PaddleClas, PaddleSeg and PaddleVideo run scripts of the same
family ("ocr") and reuse OCR_RUNNER with their own knobs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from tipcgen.dialects.base import COMMON_READS, SEP, Dialect, F, H, Layout, Signature

OCR_RUNNER = Dialect(
    family="ocr",
    reads=(
        *COMMON_READS,
        ("train_use_gpu_key", "key", "train.device"),
        ("train_use_gpu_value", "value", "train.device"),
        ("autocast_key", "key", "train.autocast"),
        ("autocast_list", "value", "train.autocast"),
        ("train_infer_img_dir", "value", "train.infer_img_dir"),
        ("train_param_key1", "key", "train.extra"),
        ("train_param_value1", "value", "train.extra"),
        ("pact_key", "key", "trainer.pact.train"),
        ("pact_trainer", "value", "trainer.pact.train"),
        ("fpgm_key", "key", "trainer.fpgm.train"),
        ("fpgm_trainer", "value", "trainer.fpgm.train"),
        ("distill_key", "key", "trainer.distill.train"),
        ("distill_trainer", "value", "trainer.distill.train"),
        ("trainer_key1", "key", "trainer.slot1.train"),
        ("trainer_value1", "value", "trainer.slot1.train"),
        ("trainer_key2", "key", "trainer.slot2.train"),
        ("trainer_value2", "value", "trainer.slot2.train"),
        ("eval_key1", "key", "eval.extra"),
        ("eval_value1", "value", "eval.extra"),
        ("pact_export", "value", "trainer.pact.export"),
        ("fpgm_export", "value", "trainer.fpgm.export"),
        ("distill_export", "value", "trainer.distill.export"),
        ("export_value1", "value", "trainer.slot1.export"),
        ("export_value2", "value", "trainer.slot2.export"),
        ("inference_dir", "value", "export.inference_dir"),
        ("infer_model_dir_list", "value", "whole_infer.models"),
        ("infer_export_list", "value", "whole_infer.exports"),
        ("infer_is_quant", "value", "whole_infer.quant"),
        ("use_mkldnn_key", "key", "inference.mkldnn"),
        ("use_mkldnn_list", "value", "inference.mkldnn"),
        ("cpu_threads_key", "key", "inference.threads"),
        ("cpu_threads_list", "value", "inference.threads"),
        ("use_trt_key", "key", "inference.tensorrt"),
        ("use_trt_list", "value", "inference.tensorrt"),
        ("precision_key", "key", "inference.precision"),
        ("precision_list", "value", "inference.precision"),
        ("save_log_key", "key", "inference.save_log"),
        ("infer_key1", "key", "inference.extra"),
        ("infer_value1", "value", "inference.extra"),
    ),
    log_name_roles=(
        "gpu_list",
        "train.run",
        "train.autocast",
        "inference.mkldnn",
        "inference.threads",
        "inference.batch_size",
        "inference.precision",
        "inference.tensorrt",
    ),
    matrix_roles=(
        "gpu_list",
        "train.autocast",
        "train.run",
        "inference.use_gpu",
        "inference.mkldnn",
        "inference.threads",
        "inference.batch_size",
        "inference.precision",
        "inference.tensorrt",
        "whole_infer.models",
    ),
)


def _detect(sig: Signature) -> Optional[str]:
    # The family's plain form: any more specific dialect of the family that matches wins.
    if sig.trainer == 14:
        return "`trainer:` on line 14 (PaddleOCR layout)"
    return None


# PaddleOCR's train-type layout (test_train_inference_python.sh reads lines 1-51).
PADDLEOCR = Layout(
    name="paddleocr",
    description="PaddleOCR train-type config (51 lines)",
    rows=(
        H("train_params"),
        F("model_name", "model_name"),
        F("python", "python"),
        F("gpu_list", "gpu_list"),
        F("train.device"),
        F("train.autocast"),
        F("train.epochs"),
        F("train.save_dir"),
        F("train.batch_size"),
        F("train.pretrained"),
        F("train.model_file", "train_model_name"),
        F("train.infer_img_dir", "train_infer_img_dir"),
        F("train.extra"),
        SEP,
        F("train.run", "trainer"),
        F("trainer.norm.train"),
        F("trainer.pact.train"),
        F("trainer.fpgm.train"),
        F("trainer.distill.train"),
        F("trainer.slot1.train"),
        F("trainer.slot2.train"),
        SEP,
        H("eval_params", trailing=" "),
        F("eval.command", "eval"),
        F("eval.extra"),
        SEP,
        H("infer_params"),
        F("export.save_dir"),
        F("export.weights"),
        F("trainer.norm.export"),
        F("trainer.pact.export"),
        F("trainer.fpgm.export"),
        F("trainer.distill.export"),
        F("trainer.slot1.export"),
        F("trainer.slot2.export"),
        F("export.inference_dir", "inference_dir"),
        F("whole_infer.models", "infer_model"),
        F("whole_infer.exports", "infer_export"),
        F("whole_infer.quant", "infer_quant"),
        F("inference.script", "inference"),
        F("inference.use_gpu"),
        F("inference.mkldnn"),
        F("inference.threads"),
        F("inference.batch_size"),
        F("inference.tensorrt"),
        F("inference.precision"),
        F("inference.model_dir"),
        F("inference.data"),
        F("inference.save_log"),
        F("inference.benchmark"),
        F("inference.extra"),
    ),
    # The seed-era script is the default (seed document 000's expected output); ocr_head: today's.
    dialect=replace(OCR_RUNNER, runners=("ocr", "ocr_head")),
    read_lines=51,
    detect=_detect,
    generic=True,
)
