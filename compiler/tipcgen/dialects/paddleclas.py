"""PaddleClas: the OCR-family layout with `kl_quant` and `pretrained_model_url` lines, launched
with `--devices`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from tipcgen.dialects.base import F, H, Signature, variant
from tipcgen.dialects.paddleocr import OCR_RUNNER, PADDLEOCR


def _detect(sig: Signature) -> Optional[str]:
    if sig.key(4).startswith("-o Global.") or "kl_quant" in sig.keys or "pretrained_model_url" in sig.keys:
        return "`-o Global.` keys / kl_quant / pretrained_model_url (PaddleClas)"
    return None


# PaddleClas: slot 19 is `to_static_train`, line 33 `kl_quant`, line 35 the pretrained model URL,
# and its infer_params header has 26 `=` on the right.
PADDLECLAS = variant(
    PADDLEOCR,
    "paddleclas",
    "PaddleClas train-type config (51 lines)",
    # plan/runners/paddleclas.py
    replace(OCR_RUNNER, launch_device_flag="--devices", runners=("paddleclas",), values_to_colon=True),
    {
        26: H("infer_params", right=26),
        35: F("export.model_url", "pretrained_model_url", ("inference_dir", "inference_model_url")),
    },
    detect=_detect,
)
