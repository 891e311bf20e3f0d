"""Layouts of the other TIPC chains: a config whose first line names another section
(`paddle2onnx_params`, `cpp_infer_params`, ...), or (PaddleClas's PTQ) whose file name does, is
read by that chain's script, not by test_train_inference_python.sh. Each chain layout is a line
table like the train layouts, with a Dialect whose runner is the chain's (plan/runners/<name>.py +
its template), so a chain is one more runner, planned, generated and checked against the repo's
real script the same way.

Kept apart from the train layouts (`LAYOUTS`): import and lint still carry these configs
verbatim (`other_configs`); `tipcgen plan`/`run` and the build pick a chain's layout by
`chain_layout()`.
"""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.base import Layout, Signature
from tipcgen.dialects.chains.models_cpp_binary import MODELS_CPP_BINARY
from tipcgen.dialects.chains.models_lite_arm import MODELS_LITE_ARM
from tipcgen.dialects.chains.models_paddle2onnx import MODELS_PADDLE2ONNX
from tipcgen.dialects.chains.models_ptq import MODELS_PTQ
from tipcgen.dialects.chains.models_serving_cpp import MODELS_SERVING_CPP
from tipcgen.dialects.chains.models_serving_python import MODELS_SERVING_PYTHON
from tipcgen.dialects.chains.paddleclas_cpp_infer import PADDLECLAS_CPP_INFER
from tipcgen.dialects.chains.paddleclas_dy2static import PADDLECLAS_DY2STATIC
from tipcgen.dialects.chains.paddleclas_lite_arm import PADDLECLAS_LITE_ARM
from tipcgen.dialects.chains.paddleclas_paddle2onnx import PADDLECLAS_PADDLE2ONNX
from tipcgen.dialects.chains.paddleclas_ptq import PADDLECLAS_PTQ
from tipcgen.dialects.chains.paddleclas_serving_cpp import PADDLECLAS_SERVING_CPP, PADDLECLAS_SERVING_CPP_SHITU
from tipcgen.dialects.chains.paddleclas_serving_python import (
    PADDLECLAS_SERVING_PYTHON,
    PADDLECLAS_SERVING_PYTHON_SHITU,
)
from tipcgen.dialects.chains.paddledetection_cpp_infer import PADDLEDETECTION_CPP_INFER
from tipcgen.dialects.chains.paddledetection_paddle2onnx import PADDLEDETECTION_PADDLE2ONNX
from tipcgen.dialects.chains.paddledetection_pipeline import PADDLEDETECTION_PIPELINE
from tipcgen.dialects.chains.paddledetection_ptq import PADDLEDETECTION_PTQ
from tipcgen.dialects.chains.paddledetection_serving_cpp import PADDLEDETECTION_SERVING_CPP
from tipcgen.dialects.chains.paddledetection_serving_python import PADDLEDETECTION_SERVING_PYTHON
from tipcgen.dialects.chains.paddleocr_cpp_infer import PADDLEOCR_CPP_INFER
from tipcgen.dialects.chains.paddleocr_infer_python import PADDLEOCR_INFER_PYTHON
from tipcgen.dialects.chains.paddleocr_lite_arm import PADDLEOCR_LITE_ARM
from tipcgen.dialects.chains.paddleocr_paddle2onnx import PADDLEOCR_PADDLE2ONNX
from tipcgen.dialects.chains.paddleocr_ptq import PADDLEOCR_PTQ
from tipcgen.dialects.chains.paddleocr_serving_cpp import PADDLEOCR_SERVING_CPP
from tipcgen.dialects.chains.paddleocr_serving_python import PADDLEOCR_SERVING_PYTHON
from tipcgen.dialects.chains.paddleseg_cpp_binary import PADDLESEG_CPP_BINARY
from tipcgen.dialects.chains.paddleseg_dy2static import PADDLESEG_DY2STATIC
from tipcgen.dialects.chains.paddleseg_paddle2onnx import PADDLESEG_PADDLE2ONNX
from tipcgen.dialects.chains.paddleseg_ptq import PADDLESEG_PTQ
from tipcgen.dialects.chains.paddleseg_serving_cpp import PADDLESEG_SERVING_CPP
from tipcgen.dialects.chains.paddleseg_serving_python import PADDLESEG_SERVING_PYTHON
from tipcgen.dialects.chains.paddlevideo_cpp_infer import PADDLEVIDEO_CPP_INFER
from tipcgen.dialects.chains.paddlevideo_dy2static import PADDLEVIDEO_DY2STATIC
from tipcgen.dialects.chains.paddlevideo_paddle2onnx import PADDLEVIDEO_PADDLE2ONNX
from tipcgen.dialects.chains.paddlevideo_ptq import PADDLEVIDEO_PTQ
from tipcgen.dialects.chains.paddlevideo_serving_cpp import PADDLEVIDEO_SERVING_CPP
from tipcgen.dialects.chains.paddlevideo_serving_python import PADDLEVIDEO_SERVING_PYTHON

# One module per chain (dialects/chains/<chain>.py); detection tries them in this order. A chain
# whose script reads two line tables (PaddleClas serving: a classifier's, PP-ShiTu's) lists its
# main table first: the script is rendered from it (script_layout).
_CHAINS: tuple[Layout, ...] = (
    PADDLECLAS_PADDLE2ONNX,
    PADDLECLAS_PTQ,
    PADDLECLAS_CPP_INFER,
    PADDLECLAS_DY2STATIC,
    PADDLESEG_DY2STATIC,  # PaddleClas's lines: detected as theirs where the family is known
    PADDLEVIDEO_DY2STATIC,
    PADDLECLAS_LITE_ARM,
    MODELS_LITE_ARM,  # PaddleClas's lines: detected as the tutorial's where the family is known
    PADDLECLAS_SERVING_PYTHON,
    PADDLECLAS_SERVING_PYTHON_SHITU,
    PADDLECLAS_SERVING_CPP,
    PADDLECLAS_SERVING_CPP_SHITU,
    PADDLESEG_PADDLE2ONNX,
    PADDLEVIDEO_PADDLE2ONNX,
    MODELS_PADDLE2ONNX,
    PADDLEDETECTION_PADDLE2ONNX,
    PADDLEDETECTION_SERVING_PYTHON,
    PADDLEDETECTION_SERVING_CPP,
    PADDLESEG_PTQ,
    PADDLESEG_SERVING_PYTHON,
    PADDLESEG_SERVING_CPP,
    MODELS_PTQ,
    PADDLEDETECTION_PTQ,
    PADDLEDETECTION_CPP_INFER,
    PADDLEVIDEO_PTQ,
    PADDLEOCR_CPP_INFER,  # PaddleVideo's lines and four more: before it where no family is known
    PADDLEVIDEO_CPP_INFER,
    PADDLEVIDEO_SERVING_PYTHON,
    PADDLEVIDEO_SERVING_CPP,
    MODELS_SERVING_PYTHON,
    MODELS_SERVING_CPP,
    PADDLEOCR_PADDLE2ONNX,
    PADDLEOCR_INFER_PYTHON,
    PADDLEOCR_PTQ,
    PADDLEOCR_SERVING_PYTHON,
    PADDLEOCR_SERVING_CPP,
    PADDLEOCR_LITE_ARM,
    PADDLEDETECTION_PIPELINE,
    PADDLESEG_CPP_BINARY,
    MODELS_CPP_BINARY,
)
CHAIN_LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in _CHAINS}
# Chains whose configs have a train layout's line table: a spec suite may name one (`layout:`),
# typed like any train suite; the build then writes that chain's script for it.
TYPED_CHAINS: dict[str, Layout] = {PADDLECLAS_PTQ.name: PADDLECLAS_PTQ}


def script_layout(layout: Layout) -> Layout:
    """The chain layout a script is rendered from: the first of its family's sharing `layout`'s script."""
    return next(c for c in _CHAINS if _same_script(c, layout))


def script_siblings(layout: Layout) -> tuple[Layout, ...]:
    """The other line tables the script of `layout` reads (in _CHAINS order)."""
    return tuple(c for c in _CHAINS if _same_script(c, layout) and c is not layout)


def _same_script(a: Layout, b: Layout) -> bool:
    """Two line tables one script reads: the same script name in the same repo family."""
    return a.dialect.script == b.dialect.script and a.name.split("_", 1)[0] == b.name.split("_", 1)[0]


def chain_layout(sig: Signature, family: Optional[str] = None) -> Optional[Layout]:
    """The chain layout whose rule fits a config's signature, or None. A rule may read the
    file name (`sig.name`): without it, a config named for the PTQ chain is a train config.
    Two families' scripts may read one line table (the models tutorial's paddle2onnx config is
    PaddleSeg's): `family` (a train layout's name, when the repo's is known) prefers its own."""
    fits = [layout for layout in _CHAINS if layout.detect is not None and layout.detect(sig)]
    own = [layout for layout in fits if family is not None and chain_family(layout.name) == family]
    best = own or fits
    return best[0] if best else None


def chain_family(name: str) -> str:
    """The train layout of a chain layout's repo family (a chain layout's name starts with it)."""
    from tipcgen.dialects import LAYOUTS

    family = name.split("_", 1)[0]
    if family not in LAYOUTS:
        raise AssertionError(f"chain layout {name} does not start with a train layout's name")
    return family


# Content cannot tell two corpus C++ serving configs from Python ones: PaddleClas's PPHGNet_small
# and PPHGNet_tiny `*_serving_cpp_*` files are byte-identical to their Python twins (the C++ script
# ignores web_service and pipline). Where a config's file name is known, the TIPC naming
# convention decides for such a config: the Python table's twin when the name says `_serving_cpp_`.
_BY_NAME = {
    PADDLECLAS_SERVING_PYTHON.name: ("_serving_cpp_", PADDLECLAS_SERVING_CPP),
    PADDLECLAS_SERVING_PYTHON_SHITU.name: ("_serving_cpp_", PADDLECLAS_SERVING_CPP_SHITU),
}


def chain_of_text(text: str, name: str = "", family: Optional[str] = None) -> Optional[Layout]:
    """The chain layout a config's text fits, or None; `name` (its file name, when known)
    decides where the text cannot (_BY_NAME); `family` prefers that repo family's (chain_layout)."""
    from tipcgen.script.lines import split_lines

    return chain_of_lines(split_lines(text), name, family)


def chain_of_lines(lines: list[str], name: str = "", family: Optional[str] = None) -> Optional[Layout]:
    """chain_of_text for a config's non-empty lines (the one rule import, lint, plan and the build use)."""
    from tipcgen.dialects import signature

    layout = chain_layout(signature(lines, name), family)
    if layout is not None and layout.name in _BY_NAME:
        marker, twin = _BY_NAME[layout.name]
        if marker in name.rsplit("/", 1)[-1]:
            return twin
    return layout


def foreign_chain(layout: Optional[Layout], family: str) -> bool:
    """Whether `layout` is a chain written for another repo family than `family` (a train layout's
    name): a config that fits only another family's table (before their own layouts, PaddleSeg's and
    PaddleVideo's dy2static configs fit PaddleClas's dy2static table only) is run by the repo's own
    script, differently; no other family's runner may type or run it."""
    from tipcgen.dialects import LAYOUTS

    return layout is not None and family in LAYOUTS and chain_family(layout.name) != family


# Which of a repo's own test_tipc/ scripts reads a config, by the config's first section (the
# TIPC convention every corpus repo follows): a config no tipcgen runner types is kept verbatim
# only where one of these scripts, kept as the repo has it, still reads it.
SECTION_SCRIPTS: dict[str, tuple[str, ...]] = {
    "train_params": ("test_train_inference_python.sh",),
    "base_train": ("test_train_dy2static_python.sh",),
    "amp_train": ("test_train_dy2static_python.sh",),
    "cpp_infer_params": ("test_inference_cpp.sh",),
    "#modelloadconfig": ("test_inference_cpp.sh",),
    "paddle2onnx_params": ("test_paddle2onnx.sh",),
    "ptq_params": ("test_ptq_inference_python.sh",),
    "kl_quant_params": ("test_ptq_inference_python.sh",),
    "serving_params": ("test_serving_infer_python.sh", "test_serving_infer_cpp.sh"),
    "serving_infer_python_params": ("test_serving_infer_python.sh",),
    "serving_infer_cpp_params": ("test_serving_infer_cpp.sh",),
    "pipeline_infer_python_params": ("test_pipeline_infer_python.sh",),
    "runtime_device:arm_cpu": ("test_lite_arm_cpu_cpp.sh",),
}


def first_section(text: str) -> str:
    """A config's first non-empty line without its `=` rule and blanks (`train_params`), "" for none."""
    from tipcgen.script.lines import split_lines

    lines = split_lines(text)
    return "".join(lines[0].strip().strip("=").split()) if lines else ""
