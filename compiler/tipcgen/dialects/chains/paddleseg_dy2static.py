"""PaddleSeg's test_train_dy2static_python.sh: PaddleClas's dy2static lines (detected as this
family's where the repo's family is known), run its own way (plan/runners/dy2static.py's
PADDLESEG: no print-step flag, `--opts to_static_training=True` for the to-static run)."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.chains.paddleclas_dy2static import PADDLECLAS_DY2STATIC

PADDLESEG_DY2STATIC = replace(
    PADDLECLAS_DY2STATIC,
    name="paddleseg_dy2static",
    description="PaddleSeg dynamic-to-static config (22-line sections, test_train_dy2static_python.sh)",
    dialect=replace(PADDLECLAS_DY2STATIC.dialect, runners=("paddleseg_dy2static",)),
    detect=lambda sig: (
        "a `base_train` section with `model_name:` and `trainer:` (PaddleSeg test_train_dy2static_python.sh)"
        if PADDLECLAS_DY2STATIC.detect is not None and PADDLECLAS_DY2STATIC.detect(sig) else None
    ),
)  # fmt: skip
