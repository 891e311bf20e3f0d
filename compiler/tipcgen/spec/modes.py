"""The run modes of test_train_inference_python.sh."""

MODES = (
    "lite_train_lite_infer",
    "lite_train_whole_infer",
    "whole_train_whole_infer",
    "whole_infer",
)
# Modes that train (whole_infer only exports and infers released models).
TRAIN_MODES = MODES[:3]
# The modes of the other chains' scripts, each of which upstream's prepare.sh has a branch for
# (its `cpp_infer`, `serving_infer`, `paddle2onnx_infer`); a spec's `prepare` may name them.
CHAIN_MODES = ("cpp_infer", "serving_infer", "paddle2onnx_infer")
PREPARE_MODES = MODES + CHAIN_MODES


def prepare_modes(used) -> tuple[str, ...]:
    """The modes a generated prepare.sh accepts: the train chain's, and the other chains' modes
    that `used` (the modes the specs prepare for) names."""
    return MODES + tuple(m for m in CHAIN_MODES if m in used)
