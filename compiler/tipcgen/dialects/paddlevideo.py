"""PaddleVideo: the OCR-family layout whose line 11 names the video directory used for inference
after training, launched with `--devices`.
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


# PaddleVideo: line 11 names the video dir used for inference after training.
PADDLEVIDEO = variant(
    PADDLEOCR,
    "paddlevideo",
    "PaddleVideo train-type config (51 lines)",
    replace(OCR_RUNNER, launch_device_flag="--devices"),
    {
        11: F("train.infer_img_dir", "train_infer_video_dir"),
        22: H("eval_params"),
    },
    detect=_detect,
)
