"""PaddleClas's C++ serving chain: the line tables test_serving_infer_cpp.sh reads. The same keys
as the Python chain's (paddleclas_serving_python.py); its configs say `web_service:null`."""

from __future__ import annotations

from dataclasses import replace

from tipcgen.dialects.base import Layout
from tipcgen.dialects.chains.paddleclas_serving_python import (
    CLS_READS,
    CLS_ROWS,
    READ_LINES,
    SHITU_READS,
    SHITU_ROWS,
    _dialect,
    _rule,
)

TITLE = ("C++ 服务化部署测试", "C++ serving test")
SCRIPT = "test_serving_infer_cpp.sh"


def _cpp(reads: tuple):
    # the C++ classifier's client is fixed (test_cpp_serving_client.py), PP-ShiTu's runs once:
    # only the device list is looped over
    return replace(
        _dialect("paddleclas_serving_cpp", SCRIPT, "results_cpp_serving.log", reads, TITLE),
        matrix_roles=("serving.use_gpu",),
    )


PADDLECLAS_SERVING_CPP = Layout(
    "paddleclas_serving_cpp",
    "PaddleClas C++ serving config (14 lines, test_serving_infer_cpp.sh)",
    CLS_ROWS,
    _cpp(CLS_READS),
    read_lines=READ_LINES,
    detect=_rule("cls", True),
)

PADDLECLAS_SERVING_CPP_SHITU = Layout(
    "paddleclas_serving_cpp_shitu",
    "PaddleClas PP-ShiTu C++ serving config (18 lines, test_serving_infer_cpp.sh)",
    SHITU_ROWS,
    _cpp(SHITU_READS),
    read_lines=READ_LINES,
    detect=_rule("shitu", True),
)
