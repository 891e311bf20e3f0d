"""PaddleSeg: the OCR-family layout with an export_params section and a second extra inference
flag (52 lines), launched with `--devices`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from tipcgen.dialects.base import F, H, Signature, variant
from tipcgen.dialects.paddleocr import OCR_RUNNER, PADDLEOCR


def _detect(sig: Signature) -> Optional[str]:
    if "export_params" in sig.headers:
        return "an export_params section (PaddleSeg)"
    return None


# PaddleSeg: export_params header at 26, infer_params header at 35 (no inference_dir line), and a
# second extra inference flag at 51.
PADDLESEG = variant(
    PADDLEOCR,
    "paddleseg",
    "PaddleSeg train-type config (52 lines)",
    replace(
        OCR_RUNNER,
        launch_device_flag="--devices",
        runners=("paddleseg",),
        prepare_word_modes=("cpp_infer",),
        # PaddleSeg's script also reads the second extra inference flag and the norm trainer's name;
        # it never uses the save_log key nor the first extra flag's value (it writes its own).
        reads=(
            *(r for r in OCR_RUNNER.reads if r[0] not in ("save_log_key", "infer_value1")),
            ("trainer_norm", "key", "trainer.norm.train"),
            ("infer_key2", "key", "inference.extra2"),
            ("infer_value2", "value", "inference.extra2"),
        ),
    ),
    {
        22: H("eval_params"),
        26: H("export_params"),
        35: H("infer_params"),
        50: F("inference.extra", lint_keys=("--save_dir",)),
        51: F("inference.extra2", lint_keys=("--model_name",)),
    },
    detect=_detect,
    read_lines=52,
)
