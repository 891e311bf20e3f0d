"""The run modes of test_train_inference_python.sh."""

MODES = (
    "lite_train_lite_infer",
    "lite_train_whole_infer",
    "whole_train_whole_infer",
    "whole_infer",
)
# Modes that train (whole_infer only exports and infers released models).
TRAIN_MODES = MODES[:3]
