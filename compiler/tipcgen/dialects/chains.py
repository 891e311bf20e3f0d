"""Layouts of the other TIPC chains: a config whose first line names another section
(`paddle2onnx_params`, `cpp_infer_params`, ...) is read by that chain's script, not by
test_train_inference_python.sh. Each chain layout is a line table like the train layouts, with
a Dialect whose runner is the chain's (plan/runners/<name>.py + its template), so a chain is one
more runner, planned, generated and checked against the repo's real script the same way.

Kept apart from the train layouts (`LAYOUTS`): import and lint still carry these configs
verbatim (`other_configs`); `tipcgen plan`/`run` and the build pick a chain's layout by
`chain_layout()`.
"""

from __future__ import annotations

from typing import Optional

from tipcgen.dialects.base import Dialect, F, H, Layout, Signature

# PaddleClas test_paddle2onnx.sh: `awk 'NR==1, NR==16'`, lines[1..15]; lines[10] (the inference
# model's URL) is read by prepare.sh only.
PADDLECLAS_PADDLE2ONNX = Layout(
    "paddleclas_paddle2onnx",
    "PaddleClas paddle2onnx config (16 lines, test_paddle2onnx.sh)",
    (
        H("paddle2onnx_params"),
        F("model_name", "model_name"),
        F("python", "python"),
        F("p2o.command", "2onnx"),
        F("p2o.model_dir", "--model_dir"),
        F("p2o.model_filename", "--model_filename"),
        F("p2o.params_filename", "--params_filename"),
        F("p2o.save_file", "--save_file"),
        F("p2o.opset", "--opset_version"),
        F("p2o.checker", "--enable_onnx_checker"),
        F("p2o.model_url", "inference_model_url"),
        F("p2o.infer.script", "inference"),
        F("p2o.infer.use_onnx"),
        F("p2o.infer.model_dir"),
        F("p2o.infer.device"),
        F("p2o.infer.config"),
    ),
    Dialect(
        family="chain",
        runners=("paddleclas_paddle2onnx",),  # plan/runners/paddleclas_paddle2onnx.py
        values_to_colon=True,
        script="test_paddle2onnx.sh",
        status_log="results_paddle2onnx.log",
        # named as in upstream's script (its `padlle2onnx_cmd` spelling included)
        reads=(
            ("model_name", "value", "model_name"),
            ("python", "value", "python"),
            ("padlle2onnx_cmd", "value", "p2o.command"),
            ("infer_model_dir_key", "key", "p2o.model_dir"),
            ("infer_model_dir_value", "value", "p2o.model_dir"),
            ("model_filename_key", "key", "p2o.model_filename"),
            ("model_filename_value", "value", "p2o.model_filename"),
            ("params_filename_key", "key", "p2o.params_filename"),
            ("params_filename_value", "value", "p2o.params_filename"),
            ("save_file_key", "key", "p2o.save_file"),
            ("save_file_value", "value", "p2o.save_file"),
            ("opset_version_key", "key", "p2o.opset"),
            ("opset_version_value", "value", "p2o.opset"),
            ("enable_onnx_checker_key", "key", "p2o.checker"),
            ("enable_onnx_checker_value", "value", "p2o.checker"),
            ("inference_py", "value", "p2o.infer.script"),
            ("use_onnx_key", "key", "p2o.infer.use_onnx"),
            ("use_onnx_value", "value", "p2o.infer.use_onnx"),
            ("inference_model_dir_key", "key", "p2o.infer.model_dir"),
            ("inference_model_dir_value", "value", "p2o.infer.model_dir"),
            ("inference_hardware_key", "key", "p2o.infer.device"),
            ("inference_hardware_value", "value", "p2o.infer.device"),
            ("inference_config_key", "key", "p2o.infer.config"),
            ("inference_config_value", "value", "p2o.infer.config"),
        ),
    ),
    read_lines=16,
    detect=lambda sig: (
        "paddle2onnx_params with `inference:` and `Global.` keys (PaddleClas test_paddle2onnx.sh)"
        if "paddle2onnx_params" in sig.headers and sig.key(11) == "inference" and sig.key(12).startswith("Global.")
        else None
    ),
)

_CHAINS: tuple[Layout, ...] = (PADDLECLAS_PADDLE2ONNX,)
CHAIN_LAYOUTS: dict[str, Layout] = {layout.name: layout for layout in _CHAINS}


def chain_layout(sig: Signature) -> Optional[Layout]:
    """The chain layout whose rule fits a config's signature, or None."""
    for layout in _CHAINS:
        if layout.detect is not None and layout.detect(sig):
            return layout
    return None


def chain_of_text(text: str) -> Optional[Layout]:
    """The chain layout a config's text fits, or None."""
    from tipcgen.dialects import signature
    from tipcgen.script.lines import split_lines

    return chain_layout(signature(split_lines(text)))
