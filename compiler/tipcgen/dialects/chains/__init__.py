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
from tipcgen.dialects.chains.paddleclas_paddle2onnx import PADDLECLAS_PADDLE2ONNX
from tipcgen.dialects.chains.paddleclas_ptq import PADDLECLAS_PTQ

# One module per chain layout (dialects/chains/<layout>.py); detection tries them in this order.
_CHAINS: tuple[Layout, ...] = (PADDLECLAS_PADDLE2ONNX, PADDLECLAS_PTQ)
CHAIN_LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in _CHAINS}
# Chains whose configs have a train layout's line table: a spec suite may name one (`layout:`),
# typed like any train suite; the build then writes that chain's script for it.
TYPED_CHAINS: dict[str, Layout] = {PADDLECLAS_PTQ.name: PADDLECLAS_PTQ}


def chain_layout(sig: Signature) -> Optional[Layout]:
    """The chain layout whose rule fits a config's signature, or None. A rule may read the
    file name (`sig.name`): without it, a config named for the PTQ chain is a train config."""
    for layout in _CHAINS:
        if layout.detect is not None and layout.detect(sig):
            return layout
    return None


def chain_of_text(text: str, name: str = "") -> Optional[Layout]:
    """The chain layout a config's text (and its file name `name`, when known) fits, or None."""
    from tipcgen.dialects import signature
    from tipcgen.script.lines import split_lines

    return chain_layout(signature(split_lines(text), name))
