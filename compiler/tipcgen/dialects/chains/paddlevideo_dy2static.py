"""PaddleVideo's test_train_dy2static_python.sh: PaddleClas's dy2static lines (detected as this
family's where the repo's family is known), run its own way (plan/runners/dy2static.py's
PADDLEVIDEO: no print-step flag, `-o to_static=True` for the to-static run; the section's
last line, which its script means to eval as a custom command, is not run: dy2static-custom-cmd)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.chains.paddleclas_dy2static import PADDLECLAS_DY2STATIC

PADDLEVIDEO_DY2STATIC = replace(
    PADDLECLAS_DY2STATIC,
    name="paddlevideo_dy2static",
    description="PaddleVideo dynamic-to-static config (22-line sections, test_train_dy2static_python.sh)",
    dialect=replace(PADDLECLAS_DY2STATIC.dialect, runners=("paddlevideo_dy2static",)),
    detect=lambda sig: (
        "a `base_train` section with `model_name:` and `trainer:` (PaddleVideo test_train_dy2static_python.sh)"
        if PADDLECLAS_DY2STATIC.detect is not None and PADDLECLAS_DY2STATIC.detect(sig) else None
    ),
)  # fmt: skip
