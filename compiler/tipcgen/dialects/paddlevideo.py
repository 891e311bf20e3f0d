"""PaddleVideo: the OCR-family layout whose line 11 names the video directory used for inference
after training, launched with `--devices`. Its own runner (plan/runners/paddlevideo.py) follows
PaddleVideo's test_train_inference_python.sh; the generated bash's variables are named as there.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from tipcgen.dialects.base import F, H, Signature, variant
from tipcgen.dialects.paddleocr import OCR_RUNNER, PADDLEOCR


def _detect(sig: Signature) -> Optional[str]:
    if "train_infer_video_dir" in sig.keys or (sig.key(27) == "-o" and sig.key(28) == "-p"):
        return "train_infer_video_dir / `-o` `-p` export keys (PaddleVideo)"
    return None


# (bash variable, key|value, role): what PaddleVideo's script reads, by its names.
VIDEO_READS = (
    ("model_name", "value", "model_name"),
    ("python", "value", "python"),
    ("gpu_list", "value", "gpu_list"),
    ("train_use_gpu_key", "key", "train.device"),
    ("train_use_gpu_value", "value", "train.device"),
    ("autocast_list", "value", "train.autocast"),
    ("epoch_key", "key", "train.epochs"),
    ("epoch_num", "value", "train.epochs"),
    ("save_model_key", "key", "train.save_dir"),
    ("train_batch_key", "key", "train.batch_size"),
    ("train_batch_value", "value", "train.batch_size"),
    ("pretrain_model_key", "key", "train.pretrained"),
    ("pretrain_model_value", "value", "train.pretrained"),
    ("train_param_key1", "key", "train.extra"),
    ("train_param_value1", "value", "train.extra"),
    ("train_param_key2", "key", "train.infer_img_dir"),
    ("train_param_value2", "value", "train.infer_img_dir"),
    ("trainer_list", "value", "train.run"),
    ("norm_trainer", "value", "trainer.norm.train"),
    ("pact_key", "key", "trainer.pact.train"),
    ("pact_trainer", "value", "trainer.pact.train"),
    ("fpgm_key", "key", "trainer.fpgm.train"),
    ("fpgm_trainer", "value", "trainer.fpgm.train"),
    ("distill_key", "key", "trainer.distill.train"),
    ("distill_trainer", "value", "trainer.distill.train"),
    ("amp_key", "key", "trainer.slot1.train"),
    ("amp_trainer", "value", "trainer.slot1.train"),
    ("trainer_key2", "key", "trainer.slot2.train"),
    ("trainer_value2", "value", "trainer.slot2.train"),
    ("eval_py", "value", "eval.command"),
    ("eval_key1", "key", "eval.extra"),
    ("save_infer_key", "key", "export.save_dir"),
    ("export_weight", "key", "export.weights"),
    ("norm_export", "value", "trainer.norm.export"),
    ("pact_export", "value", "trainer.pact.export"),
    ("fpgm_export", "value", "trainer.fpgm.export"),
    ("distill_export", "value", "trainer.distill.export"),
    ("export_value2", "value", "trainer.slot2.export"),
    ("infer_model_dir_list", "value", "whole_infer.models"),
    ("infer_export_list", "value", "whole_infer.exports"),
    ("infer_is_quant", "value", "whole_infer.quant"),
    ("inference_py", "value", "inference.script"),
    ("use_gpu_key", "key", "inference.use_gpu"),
    ("use_gpu_list", "value", "inference.use_gpu"),
    ("use_mkldnn_key", "key", "inference.mkldnn"),
    ("use_mkldnn_list", "value", "inference.mkldnn"),
    ("cpu_threads_key", "key", "inference.threads"),
    ("cpu_threads_list", "value", "inference.threads"),
    ("batch_size_key", "key", "inference.batch_size"),
    ("batch_size_list", "value", "inference.batch_size"),
    ("use_trt_key", "key", "inference.tensorrt"),
    ("use_trt_list", "value", "inference.tensorrt"),
    ("precision_key", "key", "inference.precision"),
    ("precision_list", "value", "inference.precision"),
    ("infer_model_key", "key", "inference.model_dir"),
    ("infer_model_value", "value", "inference.model_dir"),
    ("video_dir_key", "key", "inference.data"),
    ("infer_video_dir", "value", "inference.data"),
    ("benchmark_key", "key", "inference.benchmark"),
    ("benchmark_value", "value", "inference.benchmark"),
    ("infer_key1", "key", "inference.extra"),
    ("infer_value1", "value", "inference.extra"),
)

# PaddleVideo: line 11 names the video dir used for inference after training.
PADDLEVIDEO = variant(
    PADDLEOCR,
    "paddlevideo",
    "PaddleVideo train-type config (51 lines)",
    replace(OCR_RUNNER, runners=("paddlevideo",), launch_device_flag="--devices", reads=VIDEO_READS),
    {
        11: F("train.infer_img_dir", "train_infer_video_dir"),
        22: H("eval_params"),
    },
    detect=_detect,
)
